#include "kiln/attrs/pointwise_depthwise.h"

#include "kiln/attrs/window.h"

namespace kiln {

void Conv2DPointwiseDepthwiseAttrs::validate() const {
  check_spatial("strides", strides, 2, 1);
  check_spatial("dilation", dilation, 2, 1);
  check_padding("padding", padding, 2);
  check_choice("pointwise_activation", pointwise_activation, {"none", "clip", "swish"});
  check_choice("depthwise_activation", depthwise_activation, {"none", "clip", "swish"});
}

}  // namespace kiln
