#include "kiln/attrs/image.h"

#include "kiln/attrs/layout.h"
#include "kiln/attrs/window.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

void ResizeMethodAttrs::validate() const {
  if (!Layout::nchw_block(layout)) check_choice("layout", layout, {"NCHW", "NHWC"});
  check_choice("method", method, {"nearest_neighbor", "linear", "cubic"});
  check_choice("coordinate_transformation_mode", coordinate_transformation_mode,
               {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                "tf_crop_and_resize", "half_pixel_symmetric"});
  check_choice("rounding_method", rounding_method,
               {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"});
}

void Resize2DAttrs::validate() const {
  ResizeMethodAttrs::validate();
  if (size.size() != 2 || size[0] < 1 || size[1] < 1)
    throw std::move(Error("attribute 'size' must hold the output height and width")
                        .expected("[h, w] with h, w >= 1", AttrValue(size).to_string()));
  if (roi.size() != 4)
    throw std::move(Error("attribute 'roi' must have 4 values")
                        .expected("[start_h, start_w, end_h, end_w]", AttrValue(roi).to_string()));
  if (scales && (scales->size() != 2 || !((*scales)[0] > 0) || !((*scales)[1] > 0)))
    throw std::move(Error("attribute 'scales' must hold two positive ratios")
                        .expected("[scale_h, scale_w] > 0", AttrValue(*scales).to_string()));
}

void GridSampleAttrs::validate() const {
  check_choice("method", method, {"bilinear", "nearest", "bicubic"});
  check_choice("layout", layout, {"NCHW"});
  check_choice("padding_mode", padding_mode, {"zeros", "border", "reflection"});
}

}  // namespace kiln
