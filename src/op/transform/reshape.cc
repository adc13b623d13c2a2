// Ops: reshape, squeeze, expand_dims. All three only reinterpret the row-major buffer
// with another shape, so their type relations carry the whole meaning.
#include <algorithm>

#include "kiln/attrs/transform.h"
#include "kiln/op/strategy.h"
#include "op/compute_util.h"
#include "op/op_util.h"
#include "op/transform/transform_util.h"

namespace kiln {

namespace {

// Relay's special values in reshape's `newshape` (0 is "copy", unless allowzero=1).
constexpr int64_t kInferDim = -1;
constexpr int64_t kCopyRest = -2;
constexpr int64_t kMergeTwo = -3;
constexpr int64_t kSplitOne = -4;

int64_t multiply_dims(int64_t a, int64_t b) { return a == kAnyDim || b == kAnyDim ? kAnyDim : a * b; }

// Builds reshape's output shape from `newshape`. Output dims taken over from input dims
// (0, -2, -3, -4) are tracked so that a -1 is inferred only from the input dims that were not
// taken over: this keeps `reshape(Tensor[(?, 3, 4)], [0, -1])` at (?, 12).
class ReshapeBuilder {
 public:
  ReshapeBuilder(const Shape& input, const std::vector<int64_t>& newshape, bool allowzero)
      : input_(input), newshape_(newshape), allowzero_(allowzero), input_used_(input.size(), false) {}

  Shape build() {
    for (size_t i = 0; i < newshape_.size(); ++i) i = add_entry(i);
    if (infer_at_ >= 0) out_[infer_at_] = inferred_dim();
    check_element_count();
    return out_;
  }

 private:
  // Handles newshape[i]; returns the index of the last entry it consumed.
  size_t add_entry(size_t i) {
    int64_t code = newshape_[i];
    if (code > 0 || (code == 0 && allowzero_)) {
      push(code, false);
      ++src_;
    } else if (code == 0) {
      push(take_input(i), true);
    } else if (code == kInferDim) {
      if (infer_at_ >= 0)
        throw std::move(Error("at most one -1 may appear in 'newshape'").expected("one -1", ints_str(newshape_)));
      infer_at_ = static_cast<int64_t>(out_.size());
      push(1, false);
      ++src_;
    } else if (code == kCopyRest) {
      while (src_ < input_.size()) push(take_input(i), true);
    } else if (code == kMergeTwo) {
      int64_t first = take_input(i);
      push(multiply_dims(first, take_input(i)), true);
    } else if (code == kSplitOne) {
      return add_split(i);
    } else {
      throw std::move(Error(cat("invalid value ", code, " at index ", i, " of 'newshape'"))
                          .expected("a positive extent, 0, -1, -2, -3 or -4", ints_str(newshape_)));
    }
    return i;
  }

  // -4, a, b: splits one input dim into (a, b); one of them may be -1.
  size_t add_split(size_t i) {
    if (i + 2 >= newshape_.size())
      throw std::move(Error(cat("-4 at index ", i, " of 'newshape' must be followed by two extents"))
                          .expected("-4, a, b", ints_str(newshape_)));
    int64_t whole = take_input(i);
    int64_t a = newshape_[i + 1], b = newshape_[i + 2];
    bool valid = (a > 0 || a == kInferDim) && (b > 0 || b == kInferDim) && !(a == kInferDim && b == kInferDim);
    if (!valid)
      throw std::move(Error(cat("invalid split after -4 at index ", i, " of 'newshape'"))
                          .expected("two positive extents, at most one -1", ints_str(newshape_)));
    if (whole != kAnyDim) {
      int64_t known = a == kInferDim ? b : a;
      if (whole % known != 0 || (a != kInferDim && b != kInferDim && a * b != whole))
        throw std::move(Error(cat("-4 at index ", i, " of 'newshape' cannot split input dim ", src_ - 1, " of shape ",
                                  shape_str(input_)))
                            .expected(cat("a split of ", whole), cat("(", a, ", ", b, ")")));
      if (a == kInferDim) a = whole / b;
      if (b == kInferDim) b = whole / a;
    } else {
      if (a == kInferDim) a = kAnyDim;
      if (b == kInferDim) b = kAnyDim;
    }
    push(a, true);
    push(b, true);
    return i + 2;
  }

  int64_t take_input(size_t i) {
    if (src_ >= input_.size())
      throw std::move(
          Error(cat("'newshape' entry ", i, " refers to input dim ", src_, " beyond the input of rank ", input_.size()))
              .expected(cat("newshape for input shape ", shape_str(input_)), ints_str(newshape_)));
    input_used_[src_] = true;
    return input_[src_++];
  }

  void push(int64_t dim, bool from_input) {
    out_.push_back(dim);
    out_from_input_.push_back(from_input);
  }

  // The -1 dim: elements of the input dims not taken over, divided by the literal output dims.
  int64_t inferred_dim() const {
    int64_t remaining = 1;
    for (size_t d = 0; d < input_.size(); ++d) {
      if (input_used_[d]) continue;
      if (input_[d] == kAnyDim) return kAnyDim;
      remaining *= input_[d];
    }
    int64_t literal = 1;
    for (size_t d = 0; d < out_.size(); ++d)
      if (!out_from_input_[d] && static_cast<int64_t>(d) != infer_at_) literal *= out_[d];
    if (literal == 0 || remaining % literal != 0)
      throw std::move(
          Error("cannot infer the -1 in 'newshape'")
              .expected(cat("newshape dividing the ", remaining, " elements of input shape ", shape_str(input_)),
                        ints_str(newshape_)));
    return remaining / literal;
  }

  void check_element_count() const {
    bool known = std::none_of(input_.begin(), input_.end(), [](int64_t d) { return d == kAnyDim; }) &&
                 std::none_of(out_.begin(), out_.end(), [](int64_t d) { return d == kAnyDim; });
    if (known && num_elements(input_) != num_elements(out_))
      throw std::move(Error(cat("newshape ", ints_str(newshape_), " changes the number of elements"))
                          .expected(cat(shape_str(input_), " with ", num_elements(input_), " elements"),
                                    cat(shape_str(out_), " with ", num_elements(out_), " elements")));
  }

  const Shape& input_;
  const std::vector<int64_t>& newshape_;
  bool allowzero_;
  std::vector<bool> input_used_;
  size_t src_ = 0;  // next input dim a 0 / -2 / -3 / -4 refers to
  Shape out_;
  std::vector<bool> out_from_input_;
  int64_t infer_at_ = -1;
};

Type reshape_relation(const std::vector<Type>& args, const ReshapeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  return tensor_type(ReshapeBuilder(data.shape, attrs.newshape, attrs.allowzero == 1).build(), data.dtype);
}

Type squeeze_relation(const std::vector<Type>& args, const SqueezeAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  // Unknown dims are kept by squeeze(axis=None): they may not be 1 at run time.
  return tensor_type(attrs.result_shape(data.shape), data.dtype);
}

Type expand_dims_relation(const std::vector<Type>& args, const ExpandDimsAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  // The new axes go before input dim `axis`; -1 appends them after the last one.
  int64_t axis = normalize_axis(attrs.axis, data.ndim() + 1, "expand_dims axis");
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), static_cast<size_t>(attrs.num_newaxis), 1);
  out.insert(out.end(), data.shape.begin() + axis, data.shape.end());
  return tensor_type(std::move(out), data.dtype);
}

// reshape, squeeze and expand_dims keep the row-major order of the elements.
std::vector<te::Tensor> same_elements_compute(const ComputeInput& call) {
  const te::Tensor x = call.args[0];
  const std::vector<int64_t> shape = expect_tensor(call.out_type, "result").shape;
  return {te::compute(shape, call.name, [&](const te::Indices& i) { return row_major_read(x, i, shape); })};
}

}  // namespace

void register_transform_reshape_ops(OpRegistry& registry) {
  registry.add("reshape")
      .describe(
          "Same elements in another shape. In 'newshape', 0 copies the input dim at that position (a real zero "
          "extent when allowzero=1), -1 is inferred from the rest, -2 copies all remaining input dims, -3 merges "
          "two input dims, -4 a b splits one input dim into (a, b).")
      .arg("data")
      .attrs<ReshapeAttrs>()
      .set_relation<ReshapeAttrs>(reshape_relation)
      .set_pattern(OpPattern::kInjective);

  registry.add("squeeze")
      .describe("Removes the unit dims listed in 'axis', or every unit dim when 'axis' is None.")
      .arg("data")
      .attrs<SqueezeAttrs>()
      .set_relation<SqueezeAttrs>(squeeze_relation)
      .set_pattern(OpPattern::kInjective);

  registry.add("expand_dims")
      .describe("Inserts 'num_newaxis' unit dims before input dim 'axis' (negative counts from the end).")
      .arg("data")
      .attrs<ExpandDimsAttrs>()
      .set_relation<ExpandDimsAttrs>(expand_dims_relation)
      .set_pattern(OpPattern::kInjective);
  for (const char* op : {"reshape", "squeeze", "expand_dims"})
    set_compute(registry.get_mutable(op).set_keeps_bytes(), same_elements_compute);
}

}  // namespace kiln
