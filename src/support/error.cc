#include "kiln/support/error.h"

namespace kiln {

void Error::compose() {
  std::ostringstream os;
  if (!file_.empty()) os << file_ << ": ";
  if (!node_.empty()) os << "node '" << node_ << "': ";
  if (!op_.empty()) os << "op '" << op_ << "': ";
  if (internal_) os << "kiln bug (please report it): ";
  os << message_;
  if (!expected_.empty() || !found_.empty()) os << " (expected " << expected_ << ", found " << found_ << ")";
  text_ = os.str();
}

}  // namespace kiln
