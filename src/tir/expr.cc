#include "kiln/tir/expr.h"

#include <cmath>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::tir {

namespace {

PrimExpr make_node(ExprKind kind, DType dtype, std::vector<PrimExpr> operands = {}, std::string name = {},
                   Buffer buffer = nullptr) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->dtype = dtype;
  node->operands = std::move(operands);
  node->name = std::move(name);
  node->buffer = std::move(buffer);
  return PrimExpr(std::shared_ptr<const ExprNode>(std::move(node)));
}

PrimExpr make_imm(ExprKind kind, DType dtype, int64_t int_value, double float_value) {
  auto node = std::make_shared<ExprNode>();
  node->kind = kind;
  node->dtype = dtype;
  node->int_value = int_value;
  node->float_value = float_value;
  return PrimExpr(std::shared_ptr<const ExprNode>(std::move(node)));
}

bool is_imm(const PrimExpr& e) { return e.kind() == ExprKind::kIntImm || e.kind() == ExprKind::kFloatImm; }

// An immediate takes the dtype of the other operand, so `x * 2` works for float x.
PrimExpr adopt_dtype(const PrimExpr& imm, DType dtype) {
  if (imm.dtype() == dtype) return imm;
  double value = imm.kind() == ExprKind::kIntImm ? double(imm->int_value) : imm->float_value;
  return make_const(dtype, value);
}

void unify_dtypes(const char* what, PrimExpr& a, PrimExpr& b) {
  check(a.defined() && b.defined(), "tir: undefined operand of ", what);
  if (a.dtype() == b.dtype()) return;
  if (is_imm(b)) {
    b = adopt_dtype(b, a.dtype());
  } else if (is_imm(a)) {
    a = adopt_dtype(a, b.dtype());
  } else {
    throw Error(cat("tir: operands of ", what, " have different dtypes"))
        .expected(std::string(dtype_name(a.dtype())), std::string(dtype_name(b.dtype())));
  }
}

void check_bool(const char* what, const PrimExpr& e) {
  check(e.defined(), "tir: undefined operand of ", what);
  if (e.dtype() != DType::kBool)
    throw Error(cat("tir: operand of ", what, " must be bool")).expected("bool", std::string(dtype_name(e.dtype())));
}

// Number of arguments of each math intrinsic (the bitwise ones take integers only; codegen checks).
const std::map<std::string, size_t>& intrinsics() {
  static const std::map<std::string, size_t> table = {
      {"exp", 1},         {"exp2", 1},        {"log", 1},     {"log2", 1},  {"log10", 1},       {"sqrt", 1},
      {"rsqrt", 1},       {"tanh", 1},        {"sigmoid", 1}, {"erf", 1},   {"pow", 2},         {"abs", 1},
      {"fabs", 1},        {"floor", 1},       {"ceil", 1},    {"round", 1}, {"trunc", 1},       {"sin", 1},
      {"cos", 1},         {"tan", 1},         {"atan", 1},    {"fmod", 2},  {"bitwise_and", 2}, {"bitwise_or", 2},
      {"bitwise_xor", 2}, {"bitwise_not", 1},
  };
  return table;
}

}  // namespace

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  for (int64_t d : shape) check(d >= 0, "tir: buffer '", name, "' has a negative dimension in ", shape_str(shape));
  if (strides.empty()) {
    strides.assign(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  }
  if (strides.size() != shape.size())
    throw Error(cat("tir: buffer '", name, "' strides do not match its rank"))
        .expected(cat(shape.size(), " strides"), cat(strides.size()));
  return std::make_shared<const BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), std::move(strides)});
}

PrimExpr::PrimExpr(int value) : PrimExpr(int_imm(value)) {}
PrimExpr::PrimExpr(int64_t value) : PrimExpr(int_imm(value)) {}

ExprKind PrimExpr::kind() const { return node_->kind; }
DType PrimExpr::dtype() const { return node_->dtype; }
bool PrimExpr::is_int_imm() const { return node_ && node_->kind == ExprKind::kIntImm; }
bool PrimExpr::is_const_int(int64_t value) const { return is_int_imm() && node_->int_value == value; }

Var::Var(std::string name, DType dtype) : PrimExpr(make_node(ExprKind::kVar, dtype, {}, std::move(name))) {}

Var Var::from(const PrimExpr& e) {
  check(e.defined() && e.kind() == ExprKind::kVar, "tir: expected a variable");
  return Var(e);
}

PrimExpr int_imm(int64_t value, DType dtype) { return make_imm(ExprKind::kIntImm, dtype, value, 0); }
PrimExpr float_imm(double value, DType dtype) {
  if (dtype == DType::kFloat32) value = static_cast<float>(value);
  return make_imm(ExprKind::kFloatImm, dtype, 0, value);
}
PrimExpr bool_imm(bool value) { return int_imm(value ? 1 : 0, DType::kBool); }

PrimExpr make_const(DType dtype, double value) {
  if (is_float(dtype)) return float_imm(value, dtype);
  if (dtype == DType::kBool) return bool_imm(value != 0);
  return int_imm(static_cast<int64_t>(value), dtype);
}

PrimExpr binary(ExprKind kind, PrimExpr a, PrimExpr b) {
  const char* what = kind_name(kind);
  DType result;
  if (kind == ExprKind::kAnd || kind == ExprKind::kOr) {
    check_bool(what, a);
    check_bool(what, b);
    result = DType::kBool;
  } else {
    unify_dtypes(what, a, b);
    result = is_comparison(kind) ? DType::kBool : a.dtype();
  }
  return make_node(kind, result, {std::move(a), std::move(b)});
}

PrimExpr add(PrimExpr a, PrimExpr b) { return binary(ExprKind::kAdd, std::move(a), std::move(b)); }
PrimExpr sub(PrimExpr a, PrimExpr b) { return binary(ExprKind::kSub, std::move(a), std::move(b)); }
PrimExpr mul(PrimExpr a, PrimExpr b) { return binary(ExprKind::kMul, std::move(a), std::move(b)); }
PrimExpr div(PrimExpr a, PrimExpr b) { return binary(ExprKind::kDiv, std::move(a), std::move(b)); }
PrimExpr floordiv(PrimExpr a, PrimExpr b) { return binary(ExprKind::kFloorDiv, std::move(a), std::move(b)); }
PrimExpr floormod(PrimExpr a, PrimExpr b) { return binary(ExprKind::kFloorMod, std::move(a), std::move(b)); }
PrimExpr min(PrimExpr a, PrimExpr b) { return binary(ExprKind::kMin, std::move(a), std::move(b)); }
PrimExpr max(PrimExpr a, PrimExpr b) { return binary(ExprKind::kMax, std::move(a), std::move(b)); }
PrimExpr eq(PrimExpr a, PrimExpr b) { return binary(ExprKind::kEQ, std::move(a), std::move(b)); }
PrimExpr ne(PrimExpr a, PrimExpr b) { return binary(ExprKind::kNE, std::move(a), std::move(b)); }
PrimExpr lt(PrimExpr a, PrimExpr b) { return binary(ExprKind::kLT, std::move(a), std::move(b)); }
PrimExpr le(PrimExpr a, PrimExpr b) { return binary(ExprKind::kLE, std::move(a), std::move(b)); }
PrimExpr gt(PrimExpr a, PrimExpr b) { return binary(ExprKind::kGT, std::move(a), std::move(b)); }
PrimExpr ge(PrimExpr a, PrimExpr b) { return binary(ExprKind::kGE, std::move(a), std::move(b)); }
PrimExpr logical_and(PrimExpr a, PrimExpr b) { return binary(ExprKind::kAnd, std::move(a), std::move(b)); }
PrimExpr logical_or(PrimExpr a, PrimExpr b) { return binary(ExprKind::kOr, std::move(a), std::move(b)); }

PrimExpr logical_not(PrimExpr a) {
  check_bool("not", a);
  return make_node(ExprKind::kNot, DType::kBool, {std::move(a)});
}

PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
  check_bool("select", condition);
  unify_dtypes("select", true_value, false_value);
  DType dtype = true_value.dtype();
  return make_node(ExprKind::kSelect, dtype, {std::move(condition), std::move(true_value), std::move(false_value)});
}

PrimExpr cast(DType dtype, PrimExpr value) {
  check(value.defined(), "tir: undefined operand of cast");
  if (value.dtype() == dtype) return value;
  return make_node(ExprKind::kCast, dtype, {std::move(value)});
}

bool is_intrinsic(const std::string& name) { return intrinsics().count(name) != 0; }

PrimExpr call(const std::string& name, std::vector<PrimExpr> args) {
  auto it = intrinsics().find(name);
  if (it == intrinsics().end()) throw Error(cat("tir: unknown intrinsic '", name, "'"));
  if (args.size() != it->second)
    throw Error(cat("tir: intrinsic '", name, "' argument count")).expected(cat(it->second), cat(args.size()));
  for (const auto& a : args) check(a.defined(), "tir: undefined argument of ", name);
  if (args.size() == 2) unify_dtypes(name.c_str(), args[0], args[1]);
  DType dtype = args[0].dtype();
  return make_node(ExprKind::kCall, dtype, std::move(args), name);
}

namespace {
void check_indices(const char* what, const Buffer& buffer, const std::vector<PrimExpr>& indices) {
  check(buffer != nullptr, "tir: ", what, " of an undefined buffer");
  if (indices.size() != buffer->shape.size())
    throw Error(cat("tir: ", what, " of buffer '", buffer->name, "' with wrong number of indices"))
        .expected(cat(buffer->shape.size()), cat(indices.size()));
  for (const auto& i : indices) {
    check(i.defined(), "tir: undefined index of buffer '", buffer->name, "'");
    check(is_int(i.dtype()), "tir: index of buffer '", buffer->name, "' is not an integer");
  }
}
}  // namespace

PrimExpr load(Buffer buffer, std::vector<PrimExpr> indices) {
  check_indices("load", buffer, indices);
  DType dtype = buffer->dtype;
  return make_node(ExprKind::kLoad, dtype, std::move(indices), {}, std::move(buffer));
}

PrimExpr address_of(Buffer buffer, std::vector<PrimExpr> indices) {
  check_indices("address_of", buffer, indices);
  DType dtype = buffer->dtype;
  return make_node(ExprKind::kAddressOf, dtype, std::move(indices), {}, std::move(buffer));
}

PrimExpr flat_offset(const Buffer& buffer, const std::vector<PrimExpr>& indices) {
  PrimExpr flat = PrimExpr(0);
  for (size_t d = 0; d < indices.size(); ++d) flat = flat + indices[d] * buffer->strides[d];
  return flat;
}

PrimExpr extern_call(std::string function, std::vector<PrimExpr> args) {
  for (const auto& a : args) check(a.defined(), "tir: undefined argument of ", function);
  return make_node(ExprKind::kExternCall, DType::kInt32, std::move(args), std::move(function));
}

PrimExpr with_operands(const PrimExpr& e, std::vector<PrimExpr> operands) {
  bool same = operands.size() == e->operands.size();
  for (size_t i = 0; same && i < operands.size(); ++i) same = operands[i].same_as(e->operands[i]);
  if (same) return e;
  switch (e.kind()) {
    case ExprKind::kSelect: return select(operands[0], operands[1], operands[2]);
    case ExprKind::kCast: return cast(e.dtype(), operands[0]);
    case ExprKind::kNot: return logical_not(operands[0]);
    case ExprKind::kCall: return call(e->name, std::move(operands));
    case ExprKind::kLoad: return load(e->buffer, std::move(operands));
    case ExprKind::kAddressOf: return address_of(e->buffer, std::move(operands));
    case ExprKind::kExternCall: return extern_call(e->name, std::move(operands));
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return e;
    default: return binary(e.kind(), operands[0], operands[1]);
  }
}

PrimExpr with_buffer(const PrimExpr& e, Buffer buffer, std::vector<PrimExpr> indices) {
  if (e.kind() == ExprKind::kAddressOf) return address_of(std::move(buffer), std::move(indices));
  check(e.kind() == ExprKind::kLoad, "tir: with_buffer on an expression without a buffer");
  return load(std::move(buffer), std::move(indices));
}

bool expr_equal(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::kIntImm: return a->int_value == b->int_value;
    case ExprKind::kFloatImm: return a->float_value == b->float_value;
    case ExprKind::kVar: return false;  // distinct nodes are distinct variables
    default: break;
  }
  if (a->name != b->name || a->buffer != b->buffer || a->operands.size() != b->operands.size()) return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!expr_equal(a->operands[i], b->operands[i])) return false;
  return true;
}

const char* kind_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::kIntImm: return "int_imm";
    case ExprKind::kFloatImm: return "float_imm";
    case ExprKind::kVar: return "var";
    case ExprKind::kAdd: return "+";
    case ExprKind::kSub: return "-";
    case ExprKind::kMul: return "*";
    case ExprKind::kDiv: return "/";
    case ExprKind::kFloorDiv: return "//";
    case ExprKind::kFloorMod: return "%";
    case ExprKind::kMin: return "min";
    case ExprKind::kMax: return "max";
    case ExprKind::kEQ: return "==";
    case ExprKind::kNE: return "!=";
    case ExprKind::kLT: return "<";
    case ExprKind::kLE: return "<=";
    case ExprKind::kGT: return ">";
    case ExprKind::kGE: return ">=";
    case ExprKind::kAnd: return "and";
    case ExprKind::kOr: return "or";
    case ExprKind::kNot: return "not";
    case ExprKind::kSelect: return "select";
    case ExprKind::kCast: return "cast";
    case ExprKind::kCall: return "call";
    case ExprKind::kLoad: return "load";
    case ExprKind::kAddressOf: return "address_of";
    case ExprKind::kExternCall: return "extern_call";
  }
  return "?";
}

bool is_comparison(ExprKind kind) {
  return kind == ExprKind::kEQ || kind == ExprKind::kNE || kind == ExprKind::kLT || kind == ExprKind::kLE ||
         kind == ExprKind::kGT || kind == ExprKind::kGE;
}

}  // namespace kiln::tir
