#include "kiln/attrs/activation.h"

#include "kiln/attrs/window.h"

namespace kiln {

void GeluAttrs::validate() const { check_choice("approximate", approximate, {"none", "tanh"}); }

}  // namespace kiln
