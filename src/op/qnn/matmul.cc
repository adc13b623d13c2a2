// Op: qnn.matmul, numpy matmul of quantized int8/uint8 matrices (batch axes broadcast)
// accumulating sum((a - a_zero_point) * (b - b_zero_point)) in out_dtype (int32). Relay has
// qnn.dense and qnn.batch_matmul; this is their numpy-shaped sibling, as nn.matmul is of
// nn.dense, so ONNX's MatMulInteger and QLinearMatMul map to one op. a_zero_point may be
// per row of a, b_zero_point per column of b.
#include "kiln/attrs/qnn.h"
#include "op/qnn/qnn_util.h"

namespace kiln {

namespace {

Type qnn_matmul_relation(const std::vector<Type>& args, const QnnMatmulAttrs& attrs) {
  const TensorTypeNode& a = arg_tensor(args, 0, "tensor_a");
  const TensorTypeNode& b = arg_tensor(args, 1, "tensor_b");
  check_quantized_arg(a, "tensor_a");
  check_quantized_arg(b, "tensor_b");
  for (const auto& [t, name] : {std::pair{&a, "tensor_a"}, std::pair{&b, "tensor_b"}})
    if (t->ndim() < 2)
      throw std::move(Error(cat("argument '", name, "' must have at least 2 dimensions"))
                          .expected("(..., rows, cols)", shape_str(t->shape)));
  int64_t m = a.shape[a.ndim() - 2], k = a.shape[a.ndim() - 1];
  int64_t kb = b.shape[b.ndim() - 2], n = b.shape[b.ndim() - 1];
  if (k >= 0 && kb >= 0 && k != kb)
    throw std::move(Error(cat("reduction extents of 'tensor_a' ", shape_str(a.shape), " and 'tensor_b' ",
                              shape_str(b.shape), " differ"))
                        .expected(cat(k), cat(kb)));
  check_quant_param(args, 2, "a_zero_point", false, m, "row of tensor_a");
  check_quant_param(args, 3, "b_zero_point", false, n, "column of tensor_b");
  check_quant_param(args, 4, "a_scale", true, m, "row of tensor_a");
  check_quant_param(args, 5, "b_scale", true, n, "column of tensor_b");
  Shape out = broadcast_args("tensor_a batch axes", Shape(a.shape.begin(), a.shape.end() - 2), "tensor_b batch axes",
                             Shape(b.shape.begin(), b.shape.end() - 2));
  out.push_back(m);
  out.push_back(n);
  return tensor_type(out, parse_quantized_dtype("out_dtype", attrs.out_dtype));
}

}  // namespace

void register_qnn_matmul_ops(OpRegistry& registry) {
  registry.add("qnn.matmul")
      .describe(
          "Quantized numpy matmul of tensor_a (..., M, K) and tensor_b (..., K, N): the int32 sum of "
          "(a - a_zero_point) * (b - b_zero_point); zero points per tensor, per row of a, per column of b.")
      .arg("tensor_a")
      .arg("tensor_b")
      .arg("a_zero_point")
      .arg("b_zero_point")
      .arg("a_scale")
      .arg("b_scale")
      .attrs<QnnMatmulAttrs>()
      .set_relation<QnnMatmulAttrs>(qnn_matmul_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace kiln
