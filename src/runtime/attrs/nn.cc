#include "kiln/attrs/nn.h"

#include <algorithm>

#include "kiln/attrs/dtype_attr.h"
#include "kiln/attrs/layout.h"
#include "kiln/runtime/attrs.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

void check_groups(int64_t groups) {
  if (groups < 1) throw std::move(Error("attribute 'groups' must be positive").expected(">= 1", cat(groups)));
}

// The checks every convolution shares; `rank` spatial axes.
template <class A>
void validate_conv(const A& a, size_t rank, const char* data_layout, const char* kernel_layout) {
  check_choice("data_layout", a.data_layout, {data_layout});
  check_choice("kernel_layout", a.kernel_layout, {kernel_layout});
  check_choice("out_layout", a.out_layout, {"", data_layout});
  check_spatial("strides", a.strides, rank, 1);
  check_spatial("dilation", a.dilation, rank, 1);
  check_padding("padding", a.padding, rank);
  check_groups(a.groups);
  if (a.kernel_size) check_spatial("kernel_size", *a.kernel_size, rank, 1);
}

// output_padding must stay below the stride or the dilation of its axis.
template <class A>
void validate_output_padding(const A& a, size_t rank) {
  check_spatial("output_padding", a.output_padding, rank, 0);
  std::vector<int64_t> pad = spatial_values(a.output_padding, rank);
  std::vector<int64_t> strides = spatial_values(a.strides, rank), dilation = spatial_values(a.dilation, rank);
  for (size_t i = 0; i < rank; ++i)
    if (pad[i] >= std::max(strides[i], dilation[i]))
      throw std::move(Error("attribute 'output_padding' must be smaller than the stride or the dilation")
                          .expected(cat("values below strides=", AttrValue(a.strides).to_string(),
                                        " or dilation=", AttrValue(a.dilation).to_string()),
                                    AttrValue(a.output_padding).to_string()));
}

template <class A>
void validate_pool(const A& a, size_t rank) {
  check_spatial("pool_size", a.pool_size, rank, 1);
  check_spatial("strides", a.strides, rank, 1);
  check_spatial("dilation", a.dilation, rank, 1);
  check_padding("padding", a.padding, rank);
}

}  // namespace

// Blocked layouts (NCHW8c data, OIHW8i8o or depthwise OIHW1i8o weights) are nn.conv2d's only;
// its subclasses keep NCHW. Any groups: whether they split whole channel blocks depends on the
// shapes, which the type relation checks.
void Conv2DAttrs::validate() const {
  if (conv2d_blocks(data_layout, kernel_layout, out_layout)) {
    Conv2DAttrs plain = *this;
    plain.data_layout = "NCHW";
    plain.kernel_layout = "OIHW";
    plain.out_layout = "";
    validate_conv(plain, 2, "NCHW", "OIHW");
    return;
  }
  validate_conv(*this, 2, "NCHW", "OIHW");
}

void Conv2DTransposeAttrs::validate() const {
  validate_conv(*this, 2, "NCHW", "IOHW");
  validate_output_padding(*this, 2);
}

void Conv3DAttrs::validate() const { validate_conv(*this, 3, "NCDHW", "OIDHW"); }

void Conv3DTransposeAttrs::validate() const {
  validate_conv(*this, 3, "NCDHW", "IODHW");
  validate_output_padding(*this, 3);
}

namespace {

// The 2-D pools' layouts: NCHW, NHWC, or the blocked NCHW{x}c AlterOpLayout gives them.
void check_pool_layouts(const std::string& layout, const std::string& out_layout) {
  if (!Layout::nchw_block(layout)) check_choice("layout", layout, {"NCHW", "NHWC"});
  check_choice("out_layout", out_layout, {"", layout});
}

}  // namespace

void Pool2DAttrs::validate() const {
  check_pool_layouts(layout, out_layout);
  validate_pool(*this, 2);
}

void MaxPool2DWithArgmaxAttrs::validate() const {
  check_choice("layout", layout, {"NCHW"});
  Pool2DAttrs::validate();
}

void Pool3DAttrs::validate() const {
  check_choice("layout", layout, {"NCDHW"});
  check_choice("out_layout", out_layout, {"", "NCDHW"});
  validate_pool(*this, 3);
}

void GlobalPool2DAttrs::validate() const { check_pool_layouts(layout, out_layout); }

void DenseAttrs::validate() const { dtype_attr_or("out_dtype", out_dtype, DType::kFloat32); }

void BatchMatmulAttrs::validate() const { dtype_attr_or("out_dtype", out_dtype, DType::kFloat32); }

void NormAttrs::validate() const {
  if (epsilon < 0)
    throw std::move(Error("attribute 'epsilon' must not be negative").expected(">= 0", AttrValue(epsilon).to_string()));
}

void LrnAttrs::validate() const {
  if (size < 1) throw std::move(Error("attribute 'size' must be positive").expected(">= 1", cat(size)));
}

void NllLossAttrs::validate() const { check_choice("reduction", reduction, {"none", "sum", "mean"}); }

void DropoutAttrs::validate() const {
  if (!(rate >= 0.0 && rate <= 1.0))
    throw std::move(Error("attribute 'rate' out of range").expected("a rate in [0, 1]", cat(rate)));
}

void MaxUnpoolAttrs::validate() const {
  for (int64_t e : output_shape)
    if (e < 0)
      throw std::move(
          Error("attribute 'output_shape' must not be negative").expected("extents >= 0", shape_str(output_shape)));
  if (index_shape && index_shape->size() != output_shape.size())
    throw std::move(Error("attribute 'index_shape' must have the rank of 'output_shape'")
                        .expected(cat(output_shape.size(), " values"), shape_str(*index_shape)));
}

}  // namespace kiln
