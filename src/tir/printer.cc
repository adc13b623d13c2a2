#include "kiln/tir/printer.h"

#include <cmath>
#include <sstream>

#include "kiln/support/strings.h"

namespace kiln::tir {

namespace {

int precedence(ExprKind kind) {
  switch (kind) {
    case ExprKind::kOr: return 1;
    case ExprKind::kAnd: return 2;
    case ExprKind::kNot: return 3;
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE: return 4;
    case ExprKind::kAdd:
    case ExprKind::kSub: return 5;
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: return 6;
    default: return 10;
  }
}

std::string float_text(double value, DType dtype) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string text = dtype == DType::kFloat32 ? format_float(static_cast<float>(value)) : format_double(value);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return dtype == DType::kFloat32 ? text + "f" : text;
}

void print_expr(std::ostream& os, const PrimExpr& e);

void print_operand(std::ostream& os, const PrimExpr& e, int min_precedence) {
  bool parens = precedence(e.kind()) < min_precedence ||
                (e.kind() == ExprKind::kIntImm && e->int_value < 0 && min_precedence > 4);
  if (parens) os << "(";
  print_expr(os, e);
  if (parens) os << ")";
}

void print_list(std::ostream& os, const std::vector<PrimExpr>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) os << ", ";
    print_expr(os, items[i]);
  }
}

void print_expr(std::ostream& os, const PrimExpr& e) {
  if (!e.defined()) {
    os << "<undefined>";
    return;
  }
  switch (e.kind()) {
    case ExprKind::kIntImm:
      if (e.dtype() == DType::kBool)
        os << (e->int_value ? "True" : "False");
      else if (e.dtype() == DType::kInt64)
        os << e->int_value;
      else
        os << dtype_name(e.dtype()) << "(" << e->int_value << ")";
      return;
    case ExprKind::kFloatImm: os << float_text(e->float_value, e.dtype()); return;
    case ExprKind::kVar: os << e->name; return;
    case ExprKind::kNot:
      os << "not ";
      print_operand(os, e->operands[0], precedence(ExprKind::kNot));
      return;
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kSelect:
    case ExprKind::kCall:
      os << (e.kind() == ExprKind::kCall ? e->name.c_str() : kind_name(e.kind())) << "(";
      print_list(os, e->operands);
      os << ")";
      return;
    case ExprKind::kCast:
      os << dtype_name(e.dtype()) << "(";
      print_expr(os, e->operands[0]);
      os << ")";
      return;
    case ExprKind::kLoad:
    case ExprKind::kAddressOf:
      if (e.kind() == ExprKind::kAddressOf) os << "address_of(";
      os << e->buffer->name << "[";
      print_list(os, e->operands);
      os << "]";
      if (e.kind() == ExprKind::kAddressOf) os << ")";
      return;
    case ExprKind::kExternCall:
      os << "call_extern(\"" << e->name << "\"";
      for (const auto& a : e->operands) {
        os << ", ";
        print_expr(os, a);
      }
      os << ")";
      return;
    default: {
      int p = precedence(e.kind());
      bool associative = e.kind() == ExprKind::kAdd || e.kind() == ExprKind::kMul;
      print_operand(os, e->operands[0], is_comparison(e.kind()) ? p + 1 : p);
      os << " " << kind_name(e.kind()) << " ";
      print_operand(os, e->operands[1], associative ? p : p + 1);
      return;
    }
  }
}

std::string buffer_decl(const Buffer& b) {
  std::ostringstream os;
  os << "Buffer(" << (b->shape.size() == 1 ? "(" + std::to_string(b->shape[0]) + ",)" : shape_str(b->shape)) << ", \""
     << dtype_name(b->dtype) << "\")";
  return os.str();
}

class StmtPrinter {
 public:
  explicit StmtPrinter(std::ostream& os) : os_(os) {}

  void print(const Stmt& s, int indent) {
    if (!s.defined() || s.is_no_op()) {
      line(indent) << "pass\n";
      return;
    }
    if (const auto* n = s.as<SeqStmt>()) {
      for (const auto& c : n->stmts) print(c, indent);
    } else if (const auto* n = s.as<For>()) {
      line(indent) << "for " << n->loop_var.name() << " in "
                   << (n->kind == ForKind::kSerial ? "range" : for_kind_name(n->kind)) << "(";
      if (!n->min.is_const_int(0)) {
        print_expr(os_, n->min);
        os_ << ", extent=";
      }
      print_expr(os_, n->extent);
      os_ << "):\n";
      print(n->body, indent + 1);
    } else if (const auto* n = s.as<BufferStore>()) {
      line(indent) << n->buffer->name << "[";
      print_list(os_, n->indices);
      os_ << "] = ";
      print_expr(os_, n->value);
      os_ << "\n";
    } else if (const auto* n = s.as<Allocate>()) {
      line(indent) << "with allocate(" << n->buffer->name << ", " << buffer_decl(n->buffer) << "):\n";
      print(n->body, indent + 1);
    } else if (const auto* n = s.as<LetStmt>()) {
      line(indent) << n->var.name() << " = ";
      print_expr(os_, n->value);
      os_ << "\n";
      print(n->body, indent);
    } else if (const auto* n = s.as<IfThenElse>()) {
      line(indent) << "if ";
      print_expr(os_, n->condition);
      os_ << ":\n";
      print(n->then_case, indent + 1);
      if (n->else_case.defined()) {
        line(indent) << "else:\n";
        print(n->else_case, indent + 1);
      }
    } else if (const auto* n = s.as<Evaluate>()) {
      line(indent);
      print_expr(os_, n->value);
      os_ << "\n";
    }
  }

 private:
  std::ostream& line(int indent) {
    for (int i = 0; i < indent; ++i) os_ << "  ";
    return os_;
  }
  std::ostream& os_;
};

}  // namespace

std::string to_string(const PrimExpr& e) {
  std::ostringstream os;
  print_expr(os, e);
  return os.str();
}

std::string to_string(const Stmt& s) {
  std::ostringstream os;
  StmtPrinter(os).print(s, 0);
  return os.str();
}

std::string to_string(const PrimFunc& f) {
  std::ostringstream os;
  os << "@prim_func\ndef " << f.name << "(";
  for (size_t i = 0; i < f.params.size(); ++i)
    os << (i ? ", " : "") << f.params[i]->name << ": " << buffer_decl(f.params[i]);
  os << "):\n";
  StmtPrinter(os).print(f.body, 1);
  return os.str();
}

}  // namespace kiln::tir
