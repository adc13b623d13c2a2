// Ops: sum, mean, max, min, prod and argmax, argmin.
//
// Attributes (as Relay): axis = list of axes, None or [] for every axis (exclude is then
// ignored); keepdims keeps reduced axes with extent 1; exclude reduces the axes *not*
// listed. argmax/argmin add select_last_index (which of equal extremes to report).
//
// argmax/argmin return int64 indices, as ONNX ArgMax/ArgMin do (Relay returns int32);
// with several reduced axes the index is row-major over the reduced axes.
// mean of integers truncates toward zero; sum/prod of integers wrap on overflow.
#include "kiln/attrs/reduce.h"

#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/tensor/elemwise_checks.h"

namespace kiln {
namespace {

// argmax/argmin (is_arg_reduce) give int64 indices and need at least one element.
Type reduce_relation(const std::vector<Type>& args, const ReduceAttrs& attrs, DTypeClass accepted, bool is_arg_reduce) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  require_dtype("data", data.dtype, accepted);
  std::vector<bool> reduced = attrs.reduced_axes(data.shape);
  const bool keepdims = attrs.keepdims;
  Shape out;
  for (size_t d = 0; d < data.shape.size(); ++d) {
    // argmax/argmin have no index to give over nothing. (max/min give -inf/+inf there, or
    // the integer type's limits, as ONNX ReduceMax/ReduceMin specify.)
    if (is_arg_reduce && reduced[d] && data.shape[d] == 0)
      throw Error(cat("cannot reduce axis ", d, " of extent 0 (data shape ", shape_str(data.shape), ")"));
    if (!reduced[d])
      out.push_back(data.shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return tensor_type(std::move(out), is_arg_reduce ? DType::kInt64 : data.dtype);
}

// The reference kernels accumulate sums and products in double (floats) or 64 bits
// (integers); so does generated code. max/min compare in the data's own dtype.
DType accumulator_dtype(te::ReduceKind kind, DType dtype) {
  if (kind == te::ReduceKind::kMax || kind == te::ReduceKind::kMin) return dtype;
  if (is_float(dtype)) return DType::kFloat64;
  return is_unsigned_int(dtype) ? DType::kUInt64 : DType::kInt64;
}

te::Reduce make_reduce(te::ReduceKind kind, tir::PrimExpr source, std::vector<te::IterVar> axes) {
  switch (kind) {
    case te::ReduceKind::kSum: return te::sum(std::move(source), std::move(axes));
    case te::ReduceKind::kProd: return te::prod(std::move(source), std::move(axes));
    case te::ReduceKind::kMax: return te::max(std::move(source), std::move(axes));
    case te::ReduceKind::kMin: return te::min(std::move(source), std::move(axes));
  }
  return {};
}

// The data element that output element `i` reads at reduce axes `axes` (one per reduced axis).
std::vector<tir::PrimExpr> data_index(const te::Indices& i, const std::vector<bool>& reduced,
                                      const std::vector<te::IterVar>& axes, bool keepdims) {
  std::vector<tir::PrimExpr> index;
  size_t next_out = 0, next_axis = 0;
  for (bool is_reduced : reduced) {
    if (!is_reduced) {
      index.push_back(i[next_out++]);
    } else {
      index.push_back(axes[next_axis++]);
      if (keepdims) ++next_out;
    }
  }
  return index;
}

std::vector<te::IterVar> make_reduce_axes(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  std::vector<te::IterVar> axes;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) axes.push_back(te::reduce_axis(shape[d], cat("k", d)));
  return axes;
}

// argmax/argmin as the reference kernel: the extreme (NaN counting as one), then the first
// (or, with select_last_index, the last) row-major position over the reduced axes holding it.
std::function<std::vector<te::Tensor>(const ComputeInput&, const ArgReduceAttrs&)> arg_reduce_compute(bool is_max) {
  return [is_max](const ComputeInput& call, const ArgReduceAttrs& attrs) {
    const te::Tensor data = call.args[0];
    const std::vector<bool> reduced = attrs.reduced_axes(data.shape());
    const bool keepdims = attrs.keepdims, last = attrs.select_last_index;
    const std::vector<int64_t>& out_shape = expect_tensor(call.out_type, "result").shape;
    const std::vector<te::IterVar> axes = make_reduce_axes(data.shape(), reduced);
    const te::Tensor extreme = te::compute(out_shape, call.name + "_extreme", [&](const te::Indices& i) {
      const tir::PrimExpr v = data(data_index(i, reduced, axes, keepdims));
      return is_max ? te::max(v, axes) : te::min(v, axes);
    });
    const std::vector<te::IterVar> positions = make_reduce_axes(data.shape(), reduced);
    return std::vector<te::Tensor>{te::compute(out_shape, call.name, [&](const te::Indices& i) {
      const tir::PrimExpr v = data(data_index(i, reduced, positions, keepdims)), e = extreme(index_exprs(i));
      tir::PrimExpr flat = tir::int_imm(0);
      for (const te::IterVar& k : positions) flat = flat * tir::int_imm(k->extent) + tir::PrimExpr(k);
      tir::PrimExpr holds = tir::eq(v, e);
      if (is_float(v.dtype())) holds = tir::logical_or(holds, tir::logical_and(tir::ne(e, e), tir::ne(v, v)));
      return last ? te::max(tir::select(holds, flat, tir::int_imm(-1)), positions)
                  : te::min(tir::select(holds, flat, tir::int_imm(INT64_MAX)), positions);
    })};
  };
}

std::string no_bool_data(const std::vector<Type>& args, const Type&, const Attrs&) {
  return expect_tensor(args[0], "data").dtype == DType::kBool ? "bool data" : "";
}

// One reduce axis per reduced data axis; output axes map to the kept data axes. `mean`
// divides the sum by the number of reduced elements (truncating for integers).
std::function<std::vector<te::Tensor>(const ComputeInput&, const ReduceAttrs&)> reduce_compute(te::ReduceKind kind,
                                                                                               bool is_mean) {
  return [kind, is_mean](const ComputeInput& call, const ReduceAttrs& attrs) {
    const te::Tensor data = call.args[0];
    const std::vector<bool> reduced = attrs.reduced_axes(data.shape());
    const bool keepdims = attrs.keepdims;
    const std::vector<te::IterVar> axes = make_reduce_axes(data.shape(), reduced);
    int64_t count = 1;
    for (const te::IterVar& k : axes) count *= k->extent;
    const TensorTypeNode& out = expect_tensor(call.out_type, "result");
    const DType acc_dtype = accumulator_dtype(kind, out.dtype);
    const te::Tensor acc = te::compute(out.shape, call.name + "_acc", [&](const te::Indices& i) {
      return make_reduce(kind, tir::cast(acc_dtype, data(data_index(i, reduced, axes, keepdims))), axes);
    });
    if (!is_mean && acc_dtype == out.dtype) return std::vector<te::Tensor>{acc};
    return std::vector<te::Tensor>{te::compute(out.shape, call.name, [&](const te::Indices& i) {
      tir::PrimExpr value = acc(index_exprs(i));
      if (is_mean) value = tir::div(value, tir::make_const(acc_dtype, static_cast<double>(count)));
      return tir::cast(out.dtype, value);
    })};
  };
}

// Reductions over nothing give the reference kernels' special values (NaN means, 0 for
// integer means); generated code leaves those to them.
std::string no_empty_data(const std::vector<Type>& args, const Type&, const Attrs&) {
  for (int64_t d : expect_tensor(args[0], "data").shape)
    if (d == 0) return "reductions of empty data stay on the reference kernel";
  return "";
}

void add_reduce_computes(OpRegistry& registry) {
  set_compute<ReduceAttrs>(registry.get_mutable("sum"), reduce_compute(te::ReduceKind::kSum, false));
  set_compute<ReduceAttrs>(registry.get_mutable("prod"), reduce_compute(te::ReduceKind::kProd, false));
  set_compute<ReduceAttrs>(registry.get_mutable("mean"), reduce_compute(te::ReduceKind::kSum, true), no_empty_data);
  set_compute<ReduceAttrs>(registry.get_mutable("max"), reduce_compute(te::ReduceKind::kMax, false), no_bool_data);
  set_compute<ReduceAttrs>(registry.get_mutable("min"), reduce_compute(te::ReduceKind::kMin, false), no_bool_data);
  set_compute<ArgReduceAttrs>(registry.get_mutable("argmax"), arg_reduce_compute(true), no_bool_data);
  set_compute<ArgReduceAttrs>(registry.get_mutable("argmin"), arg_reduce_compute(false), no_bool_data);
}

void add_reduce_op(OpRegistry& registry, const std::string& name, const std::string& doc, DTypeClass accepted) {
  registry.add(name)
      .describe(doc)
      .arg("data")
      .attrs<ReduceAttrs>()
      .set_relation<ReduceAttrs>([accepted](const std::vector<Type>& args, const ReduceAttrs& attrs) {
        return reduce_relation(args, attrs, accepted, false);
      })
      .set_pattern(OpPattern::kCommReduce);
}

void add_arg_reduce_op(OpRegistry& registry, const std::string& name, const std::string& doc) {
  registry.add(name)
      .describe(doc)
      .arg("data")
      .attrs<ArgReduceAttrs>()
      .set_relation<ArgReduceAttrs>([](const std::vector<Type>& args, const ArgReduceAttrs& attrs) {
        return reduce_relation(args, attrs, DTypeClass::kAny, true);
      })
      .set_pattern(OpPattern::kCommReduce);
}

}  // namespace

void register_tensor_reduce_ops(OpRegistry& registry) {
  const DTypeClass numeric = DTypeClass::kNumeric;
  add_reduce_op(registry, "sum", "Sum over the axes; integers wrap on overflow.", numeric);
  add_reduce_op(registry, "mean", "Mean over the axes; for integers the quotient truncates toward zero.", numeric);
  add_reduce_op(registry, "prod", "Product over the axes; integers wrap on overflow.", numeric);
  add_reduce_op(registry, "max", "Maximum over the axes; NaN propagates; -inf (or the lowest integer) over nothing.",
                DTypeClass::kAny);
  add_reduce_op(registry, "min", "Minimum over the axes; NaN propagates; +inf (or the highest integer) over nothing.",
                DTypeClass::kAny);
  add_arg_reduce_op(registry, "argmax",
                    "int64 index of the maximum over the axes (first one unless select_last_index); NaN counts as "
                    "the maximum.");
  add_arg_reduce_op(registry, "argmin",
                    "int64 index of the minimum over the axes (first one unless select_last_index); NaN counts as "
                    "the minimum.");
  add_reduce_computes(registry);
}

}  // namespace kiln
