// Building blocks that keep converters short: the attribute converter (TVM's AttrCvt idea)
// and converters for ops that map one to one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

// Converts a node's ONNX attributes into a kiln op's attributes. Every ONNX attribute must
// be accounted for: renamed, transformed, ignored, forbidden, or (when none of these is
// said) passed on under its own name, where the op's schema checks it.
//
//   AttrConverter("nn.max_pool2d")
//       .rename("kernel_shape", "pool_size")
//       .rename("strides", "strides", std::vector<int64_t>{1, 1})
//       .ignore("storage_order")
//       .forbid("auto_pad", "handled by the converter")
class AttrConverter {
 public:
  using Transform = std::function<AttrValue(const OnnxAttr&)>;
  using Check = std::function<void(const OnnxAttrs&)>;

  explicit AttrConverter(std::string op_name) : op_name_(std::move(op_name)) {}

  // `onnx_name` is passed as `kiln_name`; when absent, `fallback` is passed unless it is None.
  AttrConverter& rename(const std::string& onnx_name, const std::string& kiln_name, AttrValue fallback = {});
  // Like rename, with the value computed from the ONNX one.
  AttrConverter& transform(const std::string& onnx_name, const std::string& kiln_name, Transform fn,
                           AttrValue fallback = {});
  // Dropped silently (meaningless for inference).
  AttrConverter& ignore(const std::string& onnx_name);
  // Dropped with a warning naming the attribute (its effect is approximated or lost).
  AttrConverter& ignore_with_warning(const std::string& onnx_name, const std::string& why);
  // An error when present.
  AttrConverter& forbid(const std::string& onnx_name, const std::string& why);
  // Always passed.
  AttrConverter& set(const std::string& kiln_name, AttrValue value);
  // Runs before conversion; throws kiln::Error when the attributes are unsupported.
  AttrConverter& check(Check fn);

  const std::string& op_name() const { return op_name_; }
  Attrs convert(ConvertContext& ctx) const;
  // The op called on `args` with the converted attributes.
  Expr call(ConvertContext& ctx, std::vector<Expr> args) const;
  // A converter calling the op on the node's present inputs, in order.
  operator ConvertFn() const;

 private:
  struct Rule {
    enum class Kind { kRename, kIgnore, kWarn, kForbid } kind;
    std::string kiln_name;
    Transform fn;
    AttrValue fallback;
    std::string why;
  };
  std::string op_name_;
  std::vector<std::pair<std::string, Rule>> rules_;
  std::vector<std::pair<std::string, AttrValue>> extras_;
  std::vector<Check> checks_;
};

// Transforms for AttrConverter: ONNX's 0/1 ints as bools, one int as a 1-element list.
AttrValue int_as_bool(const OnnxAttr& a);
AttrValue int_as_list(const OnnxAttr& a);

// Converters for ops that take the node's inputs unchanged and no attributes.
ConvertFn unary_op(std::string op_name);
ConvertFn binary_op(std::string op_name);
// Left fold of a variadic ONNX op (Sum, Max, Min, Mean's sum) with a binary kiln op.
Expr fold_binary(const std::string& op_name, const std::vector<Expr>& operands);

// A scalar constant of the given dtype.
Expr scalar_constant(DType dtype, double value);
// x[begin:end] along `axis` (strided_slice), every other axis whole.
Expr slice_axis(const Expr& x, int64_t axis, int64_t begin, int64_t end);
// A 1-D int64 constant.
Expr ints_constant(const std::vector<int64_t>& values);
// Maps a possibly negative axis into [0, rank), naming the attribute when out of range.
int64_t normalize_onnx_axis(int64_t axis, int64_t rank, const std::string& what = "axis");
std::vector<int64_t> normalize_onnx_axes(const std::vector<int64_t>& axes, int64_t rank,
                                         const std::string& what = "axes");
// The kiln dtype name ("float32") of an ONNX element type code, for cast.
std::string dtype_name_of_onnx_type(int64_t onnx_type, const std::string& what);
// Throws naming the input when its rank is not known and static (converters that compute
// attributes from the input shape need the rank).
void require_rank(const ConvertContext& ctx, size_t input, int64_t rank, const std::string& what);

}  // namespace kiln::frontend
