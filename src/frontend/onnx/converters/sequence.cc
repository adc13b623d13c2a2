// Converters: sequences (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap) and
// optionals (Optional, OptionalHasElement, OptionalGetElement).
//
// A sequence is a tuple at import time: its length and every position must be known then,
// so the sequence ops fold away and the IR holds tensors and tuples only. An optional with
// a value is that value; one without is an absent input (see optional_none()).
#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/transform.h"

namespace kiln::frontend {

namespace {

// The elements of a sequence value: a tuple expression's fields, or the items of another
// expression of tuple type (a sequence-typed graph input, a branch of If).
std::vector<Expr> sequence_elements(ConvertContext& c, size_t input) {
  Expr seq = c.input(input);
  if (const auto* tuple = as<TupleNode>(seq)) return tuple->fields;
  const TupleTypeNode* type = as_tuple(c.type_of(seq));
  if (!type)
    throw std::move(Error(cat("input ", input, " of ", c.op_type(), " is not a sequence"))
                        .expected("a sequence (tuple)", type_str(c.type_of(seq))));
  std::vector<Expr> out;
  for (size_t i = 0; i < type->fields.size(); ++i) out.push_back(make_tuple_get_item(seq, static_cast<int>(i)));
  return out;
}

// A position given as a scalar input, in [-size, size - 1] (or [-size, size] when
// `one_past_end` allows appending), as a non-negative index.
size_t sequence_position(ConvertContext& c, size_t input, size_t size, bool one_past_end) {
  std::vector<int64_t> values = c.require_ints_input(input, "position");
  check(values.size() == 1, "the position of ", c.op_type(), " must be a scalar, found ", values.size(), " values");
  int64_t n = static_cast<int64_t>(size);
  int64_t pos = values[0];
  int64_t high = one_past_end ? n : n - 1;
  if (pos < -n || pos > high)
    throw std::move(Error(cat("position of ", c.op_type(), " is out of range for a sequence of ", n, " elements"))
                        .expected(cat("a position in [", -n, ", ", high, "]"), cat(pos)));
  return static_cast<size_t>(pos < 0 ? pos + n : pos);
}

ConvertResult convert_sequence_empty(ConvertContext&) { return make_tuple({}); }

ConvertResult convert_sequence_construct(ConvertContext& c) {
  std::vector<Expr> elements;
  for (size_t i = 0; i < c.num_inputs(); ++i) elements.push_back(c.input(i));
  return make_tuple(elements);
}

ConvertResult convert_sequence_insert(ConvertContext& c) {
  std::vector<Expr> elements = sequence_elements(c, 0);
  size_t at = c.has_input(2) ? sequence_position(c, 2, elements.size(), true) : elements.size();
  elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), c.input(1));
  return make_tuple(elements);
}

ConvertResult convert_sequence_at(ConvertContext& c) {
  std::vector<Expr> elements = sequence_elements(c, 0);
  return elements[sequence_position(c, 1, elements.size(), false)];
}

ConvertResult convert_sequence_erase(ConvertContext& c) {
  std::vector<Expr> elements = sequence_elements(c, 0);
  check(!elements.empty(), "SequenceErase on an empty sequence");
  size_t at = c.has_input(1) ? sequence_position(c, 1, elements.size(), false) : elements.size() - 1;
  elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
  return make_tuple(elements);
}

ConvertResult convert_sequence_length(ConvertContext& c) {
  int64_t n = static_cast<int64_t>(sequence_elements(c, 0).size());
  return make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(n)));
}

// Sizes of the parts SplitToSequence makes along an axis of `extent`.
std::vector<int64_t> split_sizes(ConvertContext& c, int64_t extent) {
  if (!c.has_input(1)) return std::vector<int64_t>(static_cast<size_t>(extent), 1);
  NDArray split = c.require_constant_input(1, "split");
  std::vector<int64_t> values = split.to_ints();
  if (split.shape().empty()) {
    int64_t each = values.at(0);
    check(each > 0, "SplitToSequence's split must be positive, found ", each);
    std::vector<int64_t> sizes(static_cast<size_t>(extent / each), each);
    if (extent % each != 0) sizes.push_back(extent % each);
    return sizes;
  }
  int64_t total = 0;
  for (int64_t v : values) total += v;
  if (total != extent)
    throw std::move(Error("SplitToSequence's split sizes do not add up to the extent of the axis")
                        .expected(cat(extent), cat(total, " from ", shape_str(values))));
  return values;
}

ConvertResult convert_split_to_sequence(ConvertContext& c) {
  Expr x = c.input(0);
  const Shape& shape = c.input_shape(0);
  int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis", 0), static_cast<int64_t>(shape.size()));
  int64_t extent = shape[axis];
  if (extent == kAnyDim) throw Error(cat("SplitToSequence needs a static extent on axis ", axis));
  // Without `split` every part has extent 1, and keepdims=0 drops that axis.
  bool drop_axis = !c.has_input(1) && c.attrs().get_int("keepdims", 1) == 0;
  std::vector<int64_t> sizes = split_sizes(c, extent);
  std::vector<Expr> parts;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    Expr part = slice_axis(x, axis, begin, begin + size);
    if (drop_axis) part = call_op("squeeze", {part}, SqueezeAttrs{.axis = std::vector<int64_t>{axis}});
    parts.push_back(part);
    begin += size;
  }
  return make_tuple(parts);
}

ConvertResult convert_concat_from_sequence(ConvertContext& c) {
  std::vector<Expr> elements = sequence_elements(c, 0);
  check(!elements.empty(), "ConcatFromSequence of an empty sequence");
  bool new_axis = c.attrs().get_int("new_axis", 0) != 0;
  int64_t rank = c.tensor_type_of(elements[0], "element 0").ndim();
  int64_t axis = normalize_onnx_axis(c.attrs().get_int("axis"), new_axis ? rank + 1 : rank);
  if (new_axis)
    for (Expr& e : elements) e = call_op("expand_dims", {e}, ExpandDimsAttrs{.axis = axis});
  return call_op("concatenate", {make_tuple(elements)}, ConcatenateAttrs{.axis = axis});
}

// The body runs once per position; inputs after the first are sequences (one element per
// run) or tensors (the same each run). Each body output makes one output sequence.
ConvertResult convert_sequence_map(ConvertContext& c) {
  const OnnxAttr* body = c.attrs().find("body");
  check(body && body->graph, "SequenceMap needs a graph attribute 'body'");
  std::vector<std::vector<Expr>> sequences(c.num_inputs());
  std::vector<bool> is_sequence(c.num_inputs());
  size_t length = sequence_elements(c, 0).size();
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    is_sequence[i] = i == 0 || as_tuple(c.type_of(c.input(i))) != nullptr;
    if (!is_sequence[i]) continue;
    sequences[i] = sequence_elements(c, i);
    if (sequences[i].size() != length)
      throw std::move(Error(cat("SequenceMap's input ", i, " has another length than input 0"))
                          .expected(cat(length), cat(sequences[i].size())));
  }
  std::vector<std::vector<Expr>> outputs(c.num_outputs());
  for (size_t k = 0; k < length; ++k) {
    std::vector<Expr> args;
    for (size_t i = 0; i < c.num_inputs(); ++i) args.push_back(is_sequence[i] ? sequences[i][k] : c.input(i));
    std::vector<Expr> results = c.convert_subgraph(*body->graph, args);
    check(results.size() == outputs.size(), "SequenceMap's body gives ", results.size(), " outputs for ",
          outputs.size(), " node outputs");
    for (size_t j = 0; j < results.size(); ++j) outputs[j].push_back(results[j]);
  }
  std::vector<Expr> out;
  for (auto& seq : outputs) out.push_back(make_tuple(seq));
  return out;
}

ConvertResult convert_optional(ConvertContext& c) { return c.has_input(0) ? c.input(0) : optional_none(); }

ConvertResult convert_optional_has_element(ConvertContext& c) {
  return make_constant(NDArray::scalar(DType::kBool, c.has_input(0) ? 1.0 : 0.0));
}

ConvertResult convert_optional_get_element(ConvertContext& c) {
  if (!c.has_input(0)) throw Error("OptionalGetElement of an optional that has no value");
  return c.input(0);
}

}  // namespace

void register_sequence_converters(ConverterRegistry& r) {
  r.add("SequenceEmpty", 11, convert_sequence_empty);
  r.add("SequenceConstruct", 11, convert_sequence_construct);
  r.add("SequenceInsert", 11, convert_sequence_insert);
  r.add("SequenceAt", 11, convert_sequence_at);
  r.add("SequenceErase", 11, convert_sequence_erase);
  r.add("SequenceLength", 11, convert_sequence_length);
  r.add("SplitToSequence", 11, convert_split_to_sequence);
  r.add("ConcatFromSequence", 11, convert_concat_from_sequence);
  r.add("SequenceMap", 17, convert_sequence_map);
  r.add("Optional", 15, convert_optional);
  r.add("OptionalHasElement", 15, convert_optional_has_element);
  r.add("OptionalGetElement", 15, convert_optional_get_element);
}

}  // namespace kiln::frontend
