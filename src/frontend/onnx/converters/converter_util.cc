#include "frontend/onnx/converters/converter_util.h"

#include <algorithm>

#include "frontend/onnx/tensor_proto.h"
#include "kiln/attrs/indexing.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

AttrConverter& AttrConverter::rename(const std::string& onnx_name, const std::string& kiln_name, AttrValue fallback) {
  return transform(onnx_name, kiln_name, nullptr, std::move(fallback));
}

AttrConverter& AttrConverter::transform(const std::string& onnx_name, const std::string& kiln_name, Transform fn,
                                        AttrValue fallback) {
  rules_.push_back({onnx_name, Rule{Rule::Kind::kRename, kiln_name, std::move(fn), std::move(fallback), ""}});
  return *this;
}

AttrConverter& AttrConverter::ignore(const std::string& onnx_name) {
  rules_.push_back({onnx_name, Rule{Rule::Kind::kIgnore, "", nullptr, {}, ""}});
  return *this;
}

AttrConverter& AttrConverter::ignore_with_warning(const std::string& onnx_name, const std::string& why) {
  rules_.push_back({onnx_name, Rule{Rule::Kind::kWarn, "", nullptr, {}, why}});
  return *this;
}

AttrConverter& AttrConverter::forbid(const std::string& onnx_name, const std::string& why) {
  rules_.push_back({onnx_name, Rule{Rule::Kind::kForbid, "", nullptr, {}, why}});
  return *this;
}

AttrConverter& AttrConverter::set(const std::string& kiln_name, AttrValue value) {
  extras_.emplace_back(kiln_name, std::move(value));
  return *this;
}

AttrConverter& AttrConverter::check(Check fn) {
  checks_.push_back(std::move(fn));
  return *this;
}

Attrs AttrConverter::convert(ConvertContext& ctx) const {
  const OnnxAttrs& given = ctx.attrs();
  for (const auto& fn : checks_) fn(given);
  Attrs out;
  std::vector<std::string> handled;
  for (const auto& [onnx_name, rule] : rules_) {
    handled.push_back(onnx_name);
    const OnnxAttr* value = given.find(onnx_name);
    switch (rule.kind) {
      case Rule::Kind::kIgnore: break;
      case Rule::Kind::kWarn:
        if (value) ctx.warn(cat("attribute '", onnx_name, "' is ignored: ", rule.why));
        break;
      case Rule::Kind::kForbid:
        if (value) throw Error(cat("attribute '", onnx_name, "' is not supported: ", rule.why));
        break;
      case Rule::Kind::kRename:
        if (value) {
          out.set(rule.kiln_name, rule.fn ? rule.fn(*value) : value->to_attr_value(onnx_name));
        } else if (!rule.fallback.is_none()) {
          out.set(rule.kiln_name, rule.fallback);
        }
        break;
    }
  }
  for (const auto& [name, value] : given.all())
    if (std::find(handled.begin(), handled.end(), name) == handled.end()) out.set(name, value.to_attr_value(name));
  for (const auto& [name, value] : extras_) out.set(name, value);
  return out;
}

Expr AttrConverter::call(ConvertContext& ctx, std::vector<Expr> args) const {
  return call_op(op_name_, std::move(args), convert(ctx));
}

AttrConverter::operator ConvertFn() const {
  return [cvt = *this](ConvertContext& ctx) -> ConvertResult {
    std::vector<Expr> args;
    for (const auto& in : ctx.inputs())
      if (in) args.push_back(in);
    return cvt.call(ctx, std::move(args));
  };
}

static int64_t int_of(const OnnxAttr& a) {
  if (a.kind != OnnxAttr::Kind::kInt)
    throw std::move(Error("an attribute has the wrong kind").expected("an int", a.type_name));
  return a.i;
}
AttrValue int_as_bool(const OnnxAttr& a) { return AttrValue(int_of(a) != 0); }
AttrValue int_as_list(const OnnxAttr& a) { return AttrValue(std::vector<int64_t>{int_of(a)}); }

ConvertFn unary_op(std::string op_name) {
  return [op = std::move(op_name)](ConvertContext& ctx) -> ConvertResult { return call_op(op, {ctx.input(0)}); };
}

ConvertFn binary_op(std::string op_name) {
  return [op = std::move(op_name)](ConvertContext& ctx) -> ConvertResult {
    return call_op(op, {ctx.input(0), ctx.input(1)});
  };
}

Expr fold_binary(const std::string& op_name, const std::vector<Expr>& operands) {
  check(!operands.empty(), "needs at least one input");
  Expr acc = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) acc = call_op(op_name, {acc, operands[i]});
  return acc;
}

Expr scalar_constant(DType dtype, double value) { return make_constant(NDArray::scalar(dtype, value)); }

Expr slice_axis(const Expr& x, int64_t axis, int64_t begin, int64_t end) {
  StridedSliceAttrs attrs;
  attrs.begin = {begin};
  attrs.end = {end};
  attrs.axes = std::vector<int64_t>{axis};
  return call_op("strided_slice", {x}, attrs);
}

Expr ints_constant(const std::vector<int64_t>& values) {
  return make_constant(NDArray::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

int64_t normalize_onnx_axis(int64_t axis, int64_t rank, const std::string& what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw std::move(Error(cat(what, " out of range for an input of rank ", rank))
                        .expected(cat("a value in [", -rank, ", ", rank, ")"), cat(axis)));
  return a;
}

std::vector<int64_t> normalize_onnx_axes(const std::vector<int64_t>& axes, int64_t rank, const std::string& what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(normalize_onnx_axis(a, rank, what));
  return out;
}

std::string dtype_name_of_onnx_type(int64_t onnx_type, const std::string& what) {
  return std::string(dtype_name(expect_dtype_from_onnx(static_cast<int>(onnx_type), what)));
}

void require_rank(const ConvertContext& ctx, size_t input, int64_t rank, const std::string& what) {
  int64_t found = ctx.input_rank(input);
  if (found != rank)
    throw std::move(
        Error(cat(what, " must have rank ", rank)).expected(cat("rank ", rank), shape_str(ctx.input_shape(input))));
}

}  // namespace kiln::frontend
