// Ops: concatenate, stack, split.
#include "kiln/attrs/transform.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

const TupleTypeNode& tuple_argument(const std::vector<Type>& args) {
  check(!args.empty(), "missing argument 'data'");
  const TupleTypeNode* tuple = as_tuple(args[0]);
  if (!tuple)
    throw std::move(Error("argument 'data' must be a tuple of tensors").expected("a tuple", type_str(args[0])));
  if (tuple->fields.empty())
    throw std::move(Error("argument 'data' is an empty tuple").expected("at least one tensor", "()"));
  return *tuple;
}

std::string field_name(size_t i) { return cat("field ", i, " of argument 'data'"); }

Type concatenate_relation(const std::vector<Type>& args, const ConcatenateAttrs& attrs) {
  const TupleTypeNode& tuple = tuple_argument(args);
  const TensorTypeNode& first = expect_tensor(tuple.fields[0], field_name(0));
  int64_t axis = normalize_axis(attrs.axis, first.ndim(), "concatenate axis");
  Shape out = first.shape;
  // Which field fixed each dim: field 0, or a later one when field 0 left it unknown.
  std::vector<size_t> dim_source(out.size(), 0);
  for (size_t i = 1; i < tuple.fields.size(); ++i) {
    const TensorTypeNode& field = expect_tensor(tuple.fields[i], field_name(i));
    if (field.dtype != first.dtype)
      throw std::move(Error(cat(field_name(i), " has another dtype than field 0"))
                          .expected(std::string(dtype_name(first.dtype)), std::string(dtype_name(field.dtype))));
    if (field.ndim() != first.ndim())
      throw std::move(Error(cat(field_name(i), " has another rank than field 0"))
                          .expected(shape_str(first.shape), shape_str(field.shape)));
    for (size_t d = 0; d < out.size(); ++d) {
      int64_t extent = field.shape[d];
      if (static_cast<int64_t>(d) == axis) {
        out[d] = out[d] == kAnyDim || extent == kAnyDim ? kAnyDim : out[d] + extent;
      } else if (out[d] == kAnyDim) {
        out[d] = extent;
        dim_source[d] = i;
      } else if (extent != kAnyDim && extent != out[d]) {
        const TensorTypeNode& source = *as_tensor(tuple.fields[dim_source[d]]);
        throw std::move(Error(cat(field_name(i), " does not match field ", dim_source[d], " at dim ", d,
                                  " (concatenating along axis ", axis, ")"))
                            .expected(shape_str(source.shape), shape_str(field.shape)));
      }
    }
  }
  return tensor_type(std::move(out), first.dtype);
}

// Every field has the shape of the first (unknown dims take a known extent of another field);
// the result has a new dim of one entry per field at `axis`.
Type stack_relation(const std::vector<Type>& args, const StackAttrs& attrs) {
  const TupleTypeNode& tuple = tuple_argument(args);
  const TensorTypeNode& first = expect_tensor(tuple.fields[0], field_name(0));
  Shape shape = first.shape;
  for (size_t i = 1; i < tuple.fields.size(); ++i) {
    const TensorTypeNode& field = expect_tensor(tuple.fields[i], field_name(i));
    if (field.dtype != first.dtype)
      throw std::move(Error(cat(field_name(i), " has another dtype than field 0"))
                          .expected(std::string(dtype_name(first.dtype)), std::string(dtype_name(field.dtype))));
    bool same = field.ndim() == first.ndim();
    for (size_t d = 0; same && d < shape.size(); ++d) {
      int64_t extent = field.shape[d];
      same = shape[d] == kAnyDim || extent == kAnyDim || extent == shape[d];
      if (shape[d] == kAnyDim) shape[d] = extent;
    }
    if (!same)
      throw std::move(Error(cat(field_name(i), " does not have the shape of the fields before it"))
                          .expected(shape_str(shape), shape_str(field.shape)));
  }
  int64_t axis = normalize_axis(attrs.axis, first.ndim() + 1, "stack axis");
  shape.insert(shape.begin() + axis, static_cast<int64_t>(tuple.fields.size()));
  return tensor_type(std::move(shape), first.dtype);
}

// Extents of the pieces that split cuts dim `extent` into; SplitAttrs::validate() has checked
// the form of indices_or_sections.
std::vector<int64_t> split_sizes(const SplitAttrs& attrs, int64_t extent, const std::string& where) {
  if (attrs.is_sections()) {
    int64_t sections = attrs.sections();
    if (extent != kAnyDim && extent % sections != 0)
      throw std::move(Error(cat("cannot split ", where, " into ", sections, " equal sections"))
                          .expected(cat("an extent divisible by ", sections), cat(extent)));
    return std::vector<int64_t>(static_cast<size_t>(sections), extent == kAnyDim ? kAnyDim : extent / sections);
  }
  std::vector<int64_t> indices = attrs.indices();
  std::vector<int64_t> sizes;
  int64_t previous = 0;
  for (int64_t index : indices) {
    if (index < previous || (extent != kAnyDim && index > extent))
      throw std::move(Error(cat("split indices must ascend within ", where))
                          .expected(cat("indices in [0, ", extent == kAnyDim ? "?" : cat(extent), "] in order"),
                                    ints_str(indices)));
    sizes.push_back(index - previous);
    previous = index;
  }
  sizes.push_back(extent == kAnyDim ? kAnyDim : extent - previous);
  return sizes;
}

Type split_relation(const std::vector<Type>& args, const SplitAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  int64_t axis = normalize_axis(attrs.axis, data.ndim(), "split axis");
  std::string where = cat("dim ", axis, " of argument 'data' with shape ", shape_str(data.shape));
  std::vector<Type> fields;
  for (int64_t size : split_sizes(attrs, data.shape[axis], where)) {
    Shape piece = data.shape;
    piece[axis] = size;
    fields.push_back(tensor_type(std::move(piece), data.dtype));
  }
  return tuple_type(std::move(fields));
}

// Output element i along the axis comes from the input whose range holds it: a chain of
// selects on i, of which C evaluates only the branch taken.
std::vector<te::Tensor> concatenate_compute(const ComputeInput& call, const ConcatenateAttrs& attrs) {
  const TensorTypeNode& out = expect_tensor(call.out_type, "result");
  const auto axis = static_cast<size_t>(normalize_axis(attrs.axis, out.ndim()));
  return {te::compute(out.shape, call.name, [&](const te::Indices& i) {
    tir::PrimExpr value;
    int64_t start = 0;
    for (const te::Tensor& t : call.args) {
      const int64_t extent = t.shape()[axis];
      if (extent > 0) {
        const tir::PrimExpr read = t(at_axis(i, axis, tir::PrimExpr(i[axis]) - tir::int_imm(start)));
        value = value.defined() ? tir::select(tir::lt(i[axis], tir::int_imm(start)), value, read) : read;
      }
      start += extent;
    }
    return value.defined() ? value : tir::make_const(out.dtype, 0);
  })};
}

// Output element i comes from field i[axis] at i without that axis: a chain of selects on
// i[axis], as concatenate's.
std::vector<te::Tensor> stack_compute(const ComputeInput& call, const StackAttrs& attrs) {
  const TensorTypeNode& out = expect_tensor(call.out_type, "result");
  const auto axis = static_cast<size_t>(normalize_axis(attrs.axis, out.ndim()));
  return {te::compute(out.shape, call.name, [&](const te::Indices& i) {
    std::vector<tir::PrimExpr> field_index = index_exprs(i);
    field_index.erase(field_index.begin() + static_cast<std::ptrdiff_t>(axis));
    tir::PrimExpr value = call.args[0](field_index);
    for (size_t k = 1; k < call.args.size(); ++k)
      value = tir::select(tir::lt(i[axis], tir::int_imm(static_cast<int64_t>(k))), value, call.args[k](field_index));
    return value;
  })};
}

// Piece k reads the data from the sum of the earlier pieces' extents on along the axis.
std::vector<te::Tensor> split_compute(const ComputeInput& call, const SplitAttrs& attrs) {
  const te::Tensor data = call.args[0];
  const auto axis = static_cast<size_t>(normalize_axis(attrs.axis, static_cast<int64_t>(data.ndim())));
  std::vector<te::Tensor> pieces;
  int64_t start = 0;
  for (const Type& field : as_tuple(call.out_type)->fields) {
    const std::vector<int64_t>& shape = expect_tensor(field, "piece").shape;
    pieces.push_back(te::compute(shape, cat(call.name, "_", pieces.size()), [&](const te::Indices& i) {
      return data(at_axis(i, axis, tir::PrimExpr(i[axis]) + tir::int_imm(start)));
    }));
    start += shape[axis];
  }
  return pieces;
}

}  // namespace

void register_transform_concat_ops(OpRegistry& registry) {
  OpDef& concatenate = registry.add("concatenate")
                           .describe("Joins the tensors of a tuple along 'axis'; the other dims must agree.")
                           .arg("data")
                           .attrs<ConcatenateAttrs>()
                           .set_relation<ConcatenateAttrs>(concatenate_relation)
                           .set_pattern(OpPattern::kInjective);
  set_compute<ConcatenateAttrs>(concatenate, concatenate_compute);

  OpDef& stack =
      registry.add("stack")
          .describe("Joins the tensors of a tuple, all of one shape, along a new axis at 'axis' (numpy.stack).")
          .arg("data")
          .attrs<StackAttrs>()
          .set_relation<StackAttrs>(stack_relation)
          .set_pattern(OpPattern::kInjective);
  set_compute<StackAttrs>(stack, stack_compute);

  OpDef& split =
      registry.add("split")
          .describe(
              "Cuts 'data' along 'axis' into a tuple: 'indices_or_sections' is a number of equal sections or a list of "
              "ascending split indices (pieces [0, i0), [i0, i1), ..., [ilast, end)).")
          .arg("data")
          .attrs<SplitAttrs>()
          .set_relation<SplitAttrs>(split_relation)
          .set_pattern(OpPattern::kInjective);
  set_compute<SplitAttrs>(split, split_compute);
}

}  // namespace kiln
