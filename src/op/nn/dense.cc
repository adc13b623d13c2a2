// Ops: nn.dense, nn.matmul, nn.batch_matmul.
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_same_dtype(const std::vector<Type>& args, const TensorTypeNode& a, const std::string& a_name,
                      const TensorTypeNode& b, const std::string& b_name) {
  if (a.dtype != b.dtype)
    throw std::move(
        Error(cat("dtypes of '", a_name, "' ", type_str(args[0]), " and '", b_name, "' ", type_str(args[1]), " differ"))
            .expected(std::string(dtype_name(a.dtype)), std::string(dtype_name(b.dtype))));
}

void check_units(const Attrs& attrs, int64_t n, const std::string& weight_name, const Shape& weight_shape) {
  if (attrs.is_none("units")) return;
  int64_t units = attrs.get_int("units");
  if (n >= 0 && units != n)
    throw std::move(Error(cat("attribute 'units' disagrees with '", weight_name, "' ", shape_str(weight_shape)))
                        .expected(cat(n), cat(units)));
}

// data (..., K) x weight (N, K) -> (..., N).
Type dense_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 2, "units, K");
  check_numeric_arg(data, "data");
  check_same_dtype(args, data, "data", weight, "weight");
  if (data.ndim() < 1)
    throw std::move(
        Error("argument 'data' must have at least 1 dimension").expected("(..., K)", shape_str(data.shape)));
  check_same_extent(data.shape.back(), weight.shape[1], "reduction extents (last axes)", "data", data.shape, "weight",
                    weight.shape);
  check_units(attrs, weight.shape[0], "weight", weight.shape);
  Shape out = data.shape;
  out.back() = weight.shape[0];
  return tensor_type(out, out_dtype_attr(attrs, data.dtype));
}

// The batch dims and matrix extents of one matmul operand.
struct MatmulOperand {
  Shape batch;
  int64_t rows, cols;  // after the operand's transpose
};

MatmulOperand matmul_operand(const TensorTypeNode& t, bool transpose) {
  Shape batch(t.shape.begin(), t.shape.end() - 2);
  int64_t r = t.shape[t.ndim() - 2], c = t.shape[t.ndim() - 1];
  return transpose ? MatmulOperand{batch, c, r} : MatmulOperand{batch, r, c};
}

Shape broadcast_batch(const MatmulOperand& a, const std::string& a_name, const Shape& a_shape, const MatmulOperand& b,
                      const std::string& b_name, const Shape& b_shape) {
  try {
    return broadcast_shapes(a.batch, b.batch);
  } catch (const Error&) {
    throw std::move(Error(cat("batch dimensions of '", a_name, "' ", shape_str(a_shape), " and '", b_name, "' ",
                              shape_str(b_shape), " cannot be broadcast"))
                        .expected("equal batch extents or 1", cat(shape_str(a.batch), " and ", shape_str(b.batch))));
  }
}

// Numpy matmul with optional transposes of the last two axes; a 1-D operand is a vector
// (its axis is dropped from the result, as numpy does).
Type matmul_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& a = arg_tensor(args, 0, "tensor_a");
  const TensorTypeNode& b = arg_tensor(args, 1, "tensor_b");
  check_numeric_arg(a, "tensor_a");
  check_same_dtype(args, a, "tensor_a", b, "tensor_b");
  for (const auto& [t, name] : {std::pair{&a, "tensor_a"}, std::pair{&b, "tensor_b"}})
    if (t->ndim() < 1)
      throw std::move(
          Error(cat("argument '", name, "' must have at least 1 dimension")).expected("a vector or matrix", "()"));
  // A vector a is a row (1, K); a vector b is a column (K, 1).
  MatmulOperand ma =
      a.ndim() == 1 ? MatmulOperand{{}, 1, a.shape[0]} : matmul_operand(a, attrs.get_bool("transpose_a"));
  MatmulOperand mb =
      b.ndim() == 1 ? MatmulOperand{{}, b.shape[0], 1} : matmul_operand(b, attrs.get_bool("transpose_b"));
  check_same_extent(ma.cols, mb.rows, "reduction extents", "tensor_a", a.shape, "tensor_b", b.shape);
  Shape out = broadcast_batch(ma, "tensor_a", a.shape, mb, "tensor_b", b.shape);
  if (a.ndim() > 1) out.push_back(ma.rows);
  if (b.ndim() > 1) out.push_back(mb.cols);
  check_units(attrs, b.ndim() > 1 ? mb.cols : kAnyDim, "tensor_b", b.shape);
  return tensor_type(out, out_dtype_attr(attrs, a.dtype));
}

// x (B, M, K) x y (B, N, K) -> (B, M, N) with Relay's defaults (y transposed); a batch of 1 broadcasts.
Type batch_matmul_relation(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = arg_tensor_of_rank(args, 0, "x", 3, "batch, M, K");
  const TensorTypeNode& y =
      arg_tensor_of_rank(args, 1, "y", 3, attrs.get_bool("transpose_b") ? "batch, N, K" : "batch, K, N");
  check_numeric_arg(x, "x");
  check_same_dtype(args, x, "x", y, "y");
  MatmulOperand mx = matmul_operand(x, attrs.get_bool("transpose_a"));
  MatmulOperand my = matmul_operand(y, attrs.get_bool("transpose_b"));
  check_same_extent(mx.cols, my.rows, "reduction extents", "x", x.shape, "y", y.shape);
  Shape out = broadcast_batch(mx, "x", x.shape, my, "y", y.shape);
  out.push_back(mx.rows);
  out.push_back(my.cols);
  return tensor_type(out, out_dtype_attr(attrs, x.dtype));
}

}  // namespace

void register_nn_dense_ops(OpRegistry& registry) {
  registry.add("nn.dense")
      .describe("Fully connected layer: data (..., K) times the transpose of weight (units, K).")
      .arg("data")
      .arg("weight")
      .attr("units", AttrKind::kInt, AttrValue())
      .attr("out_dtype", AttrKind::kString, "")
      .set_relation(dense_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.matmul")
      .describe("Matrix product of the last two axes with numpy batch broadcasting and optional transposes.")
      .arg("tensor_a")
      .arg("tensor_b")
      .attr("units", AttrKind::kInt, AttrValue())
      .attr("out_dtype", AttrKind::kString, "")
      .attr("transpose_a", AttrKind::kBool, false)
      .attr("transpose_b", AttrKind::kBool, false)
      .set_relation(matmul_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.batch_matmul")
      .describe("Batched matrix product of x (B, M, K) and y (B, N, K) (y transposed by default, as Relay).")
      .arg("x")
      .arg("y")
      .attr("out_dtype", AttrKind::kString, "")
      .attr("transpose_a", AttrKind::kBool, false)
      .attr("transpose_b", AttrKind::kBool, true)
      .set_relation(batch_matmul_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);
}

}  // namespace kiln
