// Ops: nn.col2im (ONNX Col2Im): the inverse of im2col. Column l of data (N, C * prod(block),
// L) holds the block at block position l (row-major over the positions along each spatial
// axis); every block element is added into the image (N, C, image_shape...) at
// position * stride - pad_before + element * dilation, elements falling into the padding
// being dropped. No compute: compiled artifacts run the reference kernel (a scatter-add
// whose te form would need guarded reads).
#include "kiln/attrs/col2im.h"

#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type col2im_relation(const std::vector<Type>& args, const Col2ImAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  check_float_arg(data, "data");
  if (data.ndim() != 3)
    throw std::move(
        Error("argument 'data' must be (N, C * prod(block_shape), L)").expected("a 3-D tensor", shape_str(data.shape)));
  int64_t block_size = 1, blocks = 1;
  for (size_t a = 0; a < attrs.rank(); ++a) {
    block_size *= attrs.block_shape[a];
    blocks *= attrs.blocks_along(a);
  }
  const int64_t rows = data.shape[1], columns = data.shape[2];
  if (rows >= 0 && rows % block_size != 0)
    throw std::move(Error(cat("axis 1 of 'data' ", shape_str(data.shape), " must be a multiple of the block size ",
                              block_size, " (the product of 'block_shape')"))
                        .expected(cat("a multiple of ", block_size), cat(rows)));
  if (columns >= 0 && columns != blocks)
    throw std::move(Error(cat("axis 2 of 'data' ", shape_str(data.shape),
                              " must be the number of block positions in the padded image"))
                        .expected(cat(blocks), cat(columns)));
  Shape out{data.shape[0], rows >= 0 ? rows / block_size : kAnyDim};
  out.insert(out.end(), attrs.image_shape.begin(), attrs.image_shape.end());
  return tensor_type(std::move(out), data.dtype);
}

}  // namespace

void register_nn_col2im_ops(OpRegistry& registry) {
  registry.add("nn.col2im")
      .describe(
          "Sums blocks (the columns of data (N, C * prod(block_shape), L)) into an image (N, C, "
          "image_shape...), the inverse of im2col with strides, dilation and padding.")
      .arg("data")
      .attrs<Col2ImAttrs>()
      .set_relation<Col2ImAttrs>(col2im_relation)
      .set_pattern(OpPattern::kOpaque);
}

}  // namespace kiln
