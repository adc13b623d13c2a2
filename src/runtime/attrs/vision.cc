#include "kiln/attrs/vision.h"

namespace kiln {

void RoiAlignAttrs::validate() const {
  check_choice("layout", layout, {"NCHW"});
  check_choice("mode", mode, {"avg", "max"});
  check_spatial("pooled_size", pooled_size, 2, 1);
}

}  // namespace kiln
