// Ops: image.resize2d.
// Semantics follow ONNX Resize (opset 11 to 19) restricted to the two spatial axes, with
// Relay's attribute names; layout NCHW, NHWC or NCHW{x}c (AlterOpLayout's blocked channels).
// Extensions: 'scales' ([scale_h, scale_w], output / input), which
// ONNX models give instead of sizes; when set, the coordinate transformation uses these ratios
// rather than size / input extent, exactly as ONNX does. 'antialias' (ONNX opset 18).
//
// Compute (float data, nearest or linear, no antialiasing, every coordinate transformation but
// tf_crop_and_resize): small tables of each axis's input indices and weights, computed from the
// output index with the reference kernel's own formulas (kiln/runtime/resize_coordinate.h) in
// float64, and the output reading the data through them, as the reference kernel sums. Other
// calls run the reference kernel.
#include <cmath>

#include "kiln/attrs/image.h"
#include "kiln/attrs/layout.h"
#include "kiln/op/strategy.h"
#include "kiln/runtime/resize_coordinate.h"
#include "op/compute_util.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Type resize2d_relation(const std::vector<Type>& args, const Resize2DAttrs& attrs) {
  const Layout2D layout = layout_2d(attrs.layout);
  const int64_t block = Layout::nchw_block(attrs.layout);
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", block ? 5 : 4, attrs.layout);
  if (block && data.shape[4] >= 0 && data.shape[4] != block)
    throw std::move(
        Error(cat("the innermost axis of 'data' ", shape_str(data.shape), " must be the block of ", attrs.layout))
            .expected(cat(block), cat(data.shape[4])));
  check_numeric_arg(data, "data");
  Shape out = data.shape;
  out[layout.h] = attrs.size[0];
  out[layout.w] = attrs.size[1];
  return tensor_type(out, out_dtype_of(attrs.out_dtype, data.dtype));
}

using tir::PrimExpr;

// A float64 loop-IR expression with the arithmetic resize_coordinate.h's templates use.
struct Float64Expr {
  PrimExpr e;
  Float64Expr(double v) : e(tir::float_imm(v, DType::kFloat64)) {}  // NOLINT: constants of the formulas
  explicit Float64Expr(PrimExpr v) : e(std::move(v)) {}
};
Float64Expr operator+(const Float64Expr& a, const Float64Expr& b) { return Float64Expr(a.e + b.e); }
Float64Expr operator-(const Float64Expr& a, const Float64Expr& b) { return Float64Expr(a.e - b.e); }
Float64Expr operator*(const Float64Expr& a, const Float64Expr& b) { return Float64Expr(a.e * b.e); }
Float64Expr operator/(const Float64Expr& a, const Float64Expr& b) { return Float64Expr(a.e / b.e); }
Float64Expr floor(const Float64Expr& x) { return Float64Expr(tir::call("floor", {x.e})); }
Float64Expr ceil(const Float64Expr& x) { return Float64Expr(tir::call("ceil", {x.e})); }
// Half away from zero, as std::round (the loop IR's "round" is ONNX Round's half to even).
Float64Expr round(const Float64Expr& x) {
  return Float64Expr(
      tir::select(tir::ge(x.e, tir::float_imm(0.0, DType::kFloat64)), floor(x + 0.5).e, ceil(x - 0.5).e));
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

struct ResizeCall {
  Layout2D layout;
  ResizeAxis h, w;
  int taps;  // 1 nearest, 2 linear
  ResizeCoordMode mode;
  ResizeRounding rounding;
};

ResizeCall resize_call(const Shape& in, const Shape& out, const Resize2DAttrs& attrs) {
  ResizeCall c{layout_2d(attrs.layout),
               {},
               {},
               attrs.method == "nearest_neighbor" ? 1 : 2,
               resize_coord_mode(attrs.coordinate_transformation_mode),
               ResizeRounding::kFloor};
  c.rounding = resize_rounding(attrs.rounding_method, c.mode);
  auto axis = [&](int dim, size_t i) {
    const double scale =
        attrs.scales ? (*attrs.scales)[i] : static_cast<double>(out[dim]) / static_cast<double>(in[dim]);
    return ResizeAxis{in[dim], out[dim], scale, attrs.roi[i], attrs.roi[i + 2]};
  };
  c.h = axis(c.layout.h, 0);
  c.w = axis(c.layout.w, 1);
  return c;
}

std::string resize2d_limit(const std::vector<Type>& arg_types, const Type& out_type, const Attrs& generic) {
  const auto attrs = attrs_from<Resize2DAttrs>(generic, "image.resize2d");
  const TensorTypeNode* data = as_tensor(arg_types.at(0));
  const TensorTypeNode* out = as_tensor(out_type);
  if (!data || !out || !is_float(data->dtype) || out->dtype != data->dtype)
    return "its compute covers float data of the output's dtype only";
  if (attrs.method != "nearest_neighbor" && attrs.method != "linear")
    return "its compute covers nearest and linear only";
  if (attrs.antialias || attrs.cubic_exclude) return "its compute has no antialiasing or excluded taps";
  if (attrs.coordinate_transformation_mode == "tf_crop_and_resize") return "its compute has no tf_crop_and_resize";
  for (const Shape* s : {&data->shape, &out->shape})
    for (int64_t d : *s)
      if (d <= 0) return "its compute needs known, non-empty shapes";
  const ResizeCall c = resize_call(data->shape, out->shape, attrs);
  if (!finite_positive(c.h.scale) || !finite_positive(c.w.scale)) return "its compute needs finite positive scales";
  return "";
}

// One axis: input index and weight of each tap for every output index.
struct AxisTable {
  std::vector<te::Tensor> index, weight;
};

AxisTable axis_table(const ResizeAxis& a, const ResizeCall& c, DType dtype, const std::string& name) {
  // The coordinate, clamped as the reference kernel clamps it before taking taps.
  auto coordinate = [&](const te::Indices& i) {
    const Float64Expr x = resize_source_coordinate(Float64Expr(tir::cast(DType::kFloat64, i[0])), a, c.mode);
    return Float64Expr(tir::max(tir::min(x.e, tir::float_imm(static_cast<double>(a.in) + 3.0, DType::kFloat64)),
                                tir::float_imm(-4.0, DType::kFloat64)));
  };
  auto clamped_index = [&](PrimExpr v) { return tir::max(tir::min(v, PrimExpr(a.in - 1)), PrimExpr(0)); };
  AxisTable t;
  if (c.taps == 1) {
    t.index.push_back(te::compute({a.out}, name + "_index", [&](const te::Indices& i) {
      return clamped_index(tir::cast(DType::kInt64, resize_round(coordinate(i), c.rounding).e));
    }));
    return t;
  }
  for (int k = 0; k < 2; ++k) {
    t.index.push_back(te::compute({a.out}, cat(name, "_index", k), [&, k](const te::Indices& i) {
      return clamped_index(tir::cast(DType::kInt64, floor(coordinate(i)).e) + PrimExpr(k));
    }));
    t.weight.push_back(te::compute({a.out}, cat(name, "_weight", k), [&, k](const te::Indices& i) {
      const Float64Expr x = coordinate(i), frac = x - floor(x);
      return tir::cast(dtype, (k == 0 ? 1.0 - frac : frac).e);
    }));
  }
  return t;
}

std::vector<te::Tensor> resize2d_compute(const ComputeInput& call, const Resize2DAttrs& attrs) {
  const te::Tensor& data = call.args.at(0);
  const TensorTypeNode& out = *as_tensor(call.out_type);
  const ResizeCall c = resize_call(data.shape(), out.shape, attrs);
  const AxisTable rows = axis_table(c.h, c, data.dtype(), call.name + "_h");
  const AxisTable cols = axis_table(c.w, c, data.dtype(), call.name + "_w");
  return {te::compute(out.shape, call.name, [&](const te::Indices& i) {
    const PrimExpr oh = i[c.layout.h], ow = i[c.layout.w];
    auto at = [&](PrimExpr y, PrimExpr x) {
      std::vector<PrimExpr> index = index_exprs(i);
      index[c.layout.h] = std::move(y);
      index[c.layout.w] = std::move(x);
      return data(index);
    };
    if (c.taps == 1) return at(rows.index[0](oh), cols.index[0](ow));
    // Summed in the reference kernel's order: along the row, then the rows.
    auto row = [&](PrimExpr y) {
      return cols.weight[0](ow) * at(y, cols.index[0](ow)) + cols.weight[1](ow) * at(y, cols.index[1](ow));
    };
    return rows.weight[0](oh) * row(rows.index[0](oh)) + rows.weight[1](oh) * row(rows.index[1](oh));
  })};
}

}  // namespace

void register_image_resize_ops(OpRegistry& registry) {
  registry.add("image.resize2d")
      .describe("Resizes the spatial axes to 'size' by nearest, linear or cubic interpolation (ONNX Resize).")
      .arg("data")
      .attrs<Resize2DAttrs>()
      .set_relation<Resize2DAttrs>(resize2d_relation)
      .set_pattern(OpPattern::kInjective);
  set_compute<Resize2DAttrs>(registry.get_mutable("image.resize2d"), resize2d_compute, resize2d_limit);
}

}  // namespace kiln
