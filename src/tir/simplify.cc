#include "kiln/tir/simplify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/tir/functor.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {

namespace {

bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

// sum(coefficient * atom) + constant, where atoms are variables or non-linear sub-expressions.
struct LinearForm {
  std::vector<std::pair<PrimExpr, int64_t>> terms;
  int64_t constant = 0;
  bool overflow = false;  // arithmetic left int64: the form must not be used

  static LinearForm of_const(int64_t c) { return LinearForm{{}, c, false}; }
  static LinearForm of_atom(PrimExpr atom) { return LinearForm{{{std::move(atom), 1}}, 0, false}; }
  bool is_const() const { return terms.empty() && !overflow; }

  void add_term(const PrimExpr& atom, int64_t coeff) {
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (!expr_equal(it->first, atom)) continue;
      if (!checked_add(it->second, coeff, &it->second)) overflow = true;
      if (it->second == 0) terms.erase(it);
      return;
    }
    if (coeff != 0) terms.emplace_back(atom, coeff);
  }
  void add(const LinearForm& other, int64_t sign) {
    overflow = overflow || other.overflow;
    for (const auto& [atom, coeff] : other.terms) add_term(atom, sign * coeff);
    if (!checked_add(constant, sign * other.constant, &constant)) overflow = true;
  }
  void scale(int64_t factor) {
    if (factor == 0) {
      terms.clear();
      constant = 0;
      return;
    }
    for (auto& term : terms)
      if (!checked_mul(term.second, factor, &term.second)) overflow = true;
    if (!checked_mul(constant, factor, &constant)) overflow = true;
  }
};

std::optional<IntRange> scale_range(IntRange r, int64_t c) {
  IntRange out;
  if (!checked_mul(r.min, c, &out.min) || !checked_mul(r.max, c, &out.max)) return std::nullopt;
  if (c < 0) std::swap(out.min, out.max);
  return out;
}

std::optional<IntRange> add_ranges(IntRange a, IntRange b) {
  IntRange out;
  if (!checked_add(a.min, b.min, &out.min) || !checked_add(a.max, b.max, &out.max)) return std::nullopt;
  return out;
}

class ExprSimplifier {
 public:
  explicit ExprSimplifier(const Analyzer& analyzer) : analyzer_(analyzer) {}

  PrimExpr simplify(const PrimExpr& e) {
    if (!e.defined()) return e;
    if (is_int(e.dtype()) && is_linear_kind(e.kind())) {
      LinearForm form = linearize(e);
      if (!form.overflow) return to_expr(form, e.dtype());
    }
    return simplify_generic(e);
  }

  std::optional<IntRange> bound(const PrimExpr& e) {
    if (!e.defined() || !is_int(e.dtype())) return std::nullopt;
    return bound_of(linearize(e));
  }

 private:
  static bool is_linear_kind(ExprKind k) {
    return k == ExprKind::kAdd || k == ExprKind::kSub || k == ExprKind::kMul || k == ExprKind::kFloorDiv ||
           k == ExprKind::kFloorMod;
  }

  LinearForm linearize(const PrimExpr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm: return LinearForm::of_const(e->int_value);
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        LinearForm form = linearize(e->operands[0]);
        form.add(linearize(e->operands[1]), e.kind() == ExprKind::kAdd ? 1 : -1);
        merge_divmod(form);
        return form;
      }
      case ExprKind::kMul: {
        LinearForm a = linearize(e->operands[0]);
        LinearForm b = linearize(e->operands[1]);
        if (b.is_const()) {
          a.scale(b.constant);
          return a;
        }
        if (a.is_const()) {
          b.scale(a.constant);
          return b;
        }
        if (a.overflow || b.overflow) return LinearForm::of_atom(e);
        // Order the factors so that i * j and j * i are one atom.
        PrimExpr x = to_expr(a, e.dtype()), y = to_expr(b, e.dtype());
        if (to_string(y) < to_string(x)) std::swap(x, y);
        return LinearForm::of_atom(mul(x, y));
      }
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        bool is_mod = e.kind() == ExprKind::kFloorMod;
        LinearForm a = linearize(e->operands[0]);
        PrimExpr divisor = simplify(e->operands[1]);
        if (!a.overflow && divisor.is_int_imm() && divisor->int_value > 0)
          return fold_divmod(a, divisor->int_value, is_mod, e.dtype());
        if (a.is_const() && divisor.is_int_imm() && divisor->int_value != 0) {
          int64_t c = divisor->int_value;
          if (a.constant == std::numeric_limits<int64_t>::min() && c == -1) return LinearForm::of_atom(e);
          return LinearForm::of_const(is_mod ? floor_mod(a.constant, c) : floor_div(a.constant, c));
        }
        PrimExpr lhs = a.overflow ? e->operands[0] : to_expr(a, e.dtype());
        return LinearForm::of_atom(is_mod ? floormod(lhs, divisor) : floordiv(lhs, divisor));
      }
      default: {
        PrimExpr s = simplify_generic(e);
        if (s.is_int_imm()) return LinearForm::of_const(s->int_value);
        return LinearForm::of_atom(s);
      }
    }
  }

  // The term k * floormod(x, c) that completes floordiv(x, c) (`div`), if the form has one.
  static std::optional<size_t> remainder_term(const LinearForm& form, const PrimExpr& div, int64_t k) {
    for (size_t j = 0; j < form.terms.size(); ++j) {
      const PrimExpr& mod = form.terms[j].first;
      if (mod.kind() == ExprKind::kFloorMod && form.terms[j].second == k &&
          expr_equal(mod->operands[0], div->operands[0]) && expr_equal(mod->operands[1], div->operands[1]))
        return j;
    }
    return std::nullopt;
  }

  static void erase_terms(LinearForm& form, size_t i, size_t j) {
    form.terms.erase(form.terms.begin() + static_cast<std::ptrdiff_t>(std::max(i, j)));
    form.terms.erase(form.terms.begin() + static_cast<std::ptrdiff_t>(std::min(i, j)));
  }

  // k * c * floordiv(x, c) + k * floormod(x, c) = k * x: the index of a fused loop split back
  // into its axes, e.g. a row-major offset of both parts of a fused (row, column) loop.
  void merge_divmod(LinearForm& form) {
    for (size_t i = 0; i < form.terms.size(); ++i) {
      const PrimExpr div = form.terms[i].first;
      if (div.kind() != ExprKind::kFloorDiv || !div->operands[1].is_int_imm()) continue;
      const int64_t c = div->operands[1]->int_value, div_coeff = form.terms[i].second;
      if (c <= 0 || div_coeff % c != 0) continue;
      const int64_t k = div_coeff / c;
      if (std::optional<size_t> j = remainder_term(form, div, k)) {
        erase_terms(form, i, *j);
        form.add(linearize(div->operands[0]), k);
        merge_divmod(form);
        return;
      }
    }
    merge_nested_mod(form);
  }

  // k * c * floormod(floordiv(x, c), b) + k * floormod(x, c) = k * floormod(x, c * b): a
  // row-major offset within a (b, c) plane of an index split as (..., b, c), e.g. a reshape
  // that splits a plane's rows and columns and a transpose that keeps them (channel shuffles).
  void merge_nested_mod(LinearForm& form) {
    for (size_t i = 0; i < form.terms.size(); ++i) {
      const PrimExpr outer = form.terms[i].first;
      if (outer.kind() != ExprKind::kFloorMod || !outer->operands[1].is_int_imm()) continue;
      const PrimExpr div = outer->operands[0];
      if (div.kind() != ExprKind::kFloorDiv || !div->operands[1].is_int_imm()) continue;
      const int64_t b = outer->operands[1]->int_value, c = div->operands[1]->int_value, coeff = form.terms[i].second;
      int64_t cb;
      if (b <= 0 || c <= 0 || coeff % c != 0 || !checked_mul(c, b, &cb)) continue;
      const int64_t k = coeff / c;
      if (std::optional<size_t> j = remainder_term(form, div, k)) {
        erase_terms(form, i, *j);
        LinearForm merged = fold_divmod(linearize(div->operands[0]), cb, true, div.dtype());
        merged.scale(k);
        form.add(merged, 1);
        merge_divmod(form);
        return;
      }
    }
  }

  // floordiv/floormod of `x` by a positive constant, folded where bounds allow.
  LinearForm fold_divmod(const LinearForm& x, int64_t c, bool is_mod, DType dtype) {
    if (x.is_const()) return LinearForm::of_const(is_mod ? floor_mod(x.constant, c) : floor_div(x.constant, c));
    if (c == 1) return is_mod ? LinearForm::of_const(0) : x;
    // The whole range falls in one period.
    if (auto r = bound_of(x)) {
      int64_t q = floor_div(r->min, c);
      if (q == floor_div(r->max, c)) {
        if (!is_mod) return LinearForm::of_const(q);
        LinearForm rest = x;
        rest.add(LinearForm::of_const(q * c), -1);
        return rest;
      }
    }
    // x = g * x' + r with 0 <= r < g and g | c: floordiv(x, c) = floordiv(x', c / g),
    // floormod(x, c) = g * floormod(x', c / g) + r.
    for (int64_t g : divisor_candidates(x, c)) {
      LinearForm quotient, remainder;
      for (const auto& [atom, coeff] : x.terms) {
        if (coeff % g == 0)
          quotient.add_term(atom, coeff / g);
        else
          remainder.add_term(atom, coeff);
      }
      quotient.constant = floor_div(x.constant, g);
      remainder.constant = floor_mod(x.constant, g);
      auto r = bound_of(remainder);
      if (!r || r->min < 0 || r->max >= g) continue;
      if (g == c) return is_mod ? remainder : quotient;
      LinearForm folded = fold_divmod(quotient, c / g, is_mod, dtype);
      if (!is_mod) return folded;
      folded.scale(g);
      folded.add(remainder, 1);
      return folded;
    }
    // floordiv(floordiv(y, a), c) = floordiv(y, a * c) for positive a, c.
    if (!is_mod && x.constant == 0 && x.terms.size() == 1 && x.terms[0].second == 1 &&
        x.terms[0].first.kind() == ExprKind::kFloorDiv && x.terms[0].first->operands[1].is_int_imm()) {
      int64_t a = x.terms[0].first->operands[1]->int_value, ac;
      if (a > 0 && checked_mul(a, c, &ac))
        return fold_divmod(linearize(x.terms[0].first->operands[0]), ac, false, dtype);
    }
    PrimExpr lhs = to_expr(x, dtype);
    return LinearForm::of_atom(is_mod ? floormod(lhs, int_imm(c, dtype)) : floordiv(lhs, int_imm(c, dtype)));
  }

  static std::vector<int64_t> divisor_candidates(const LinearForm& x, int64_t c) {
    std::vector<int64_t> gs = {c};
    for (const auto& term : x.terms) {
      int64_t g = std::gcd(c, term.second);
      if (g > 1) gs.push_back(g);
    }
    std::sort(gs.rbegin(), gs.rend());
    gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
    return gs;
  }

  std::optional<IntRange> bound_of(const LinearForm& form) {
    if (form.overflow) return std::nullopt;
    std::optional<IntRange> total = IntRange{form.constant, form.constant};
    for (const auto& [atom, coeff] : form.terms) {
      auto r = bound_of_atom(atom);
      if (!r) return std::nullopt;
      auto scaled = scale_range(*r, coeff);
      if (!scaled) return std::nullopt;
      total = add_ranges(*total, *scaled);
      if (!total) return std::nullopt;
    }
    return total;
  }

  std::optional<IntRange> bound_of_atom(const PrimExpr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm: return IntRange{e->int_value, e->int_value};
      case ExprKind::kVar: return analyzer_.var_range(e);
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        const PrimExpr& d = e->operands[1];
        if (!d.is_int_imm() || d->int_value <= 0) return std::nullopt;
        int64_t c = d->int_value;
        auto a = bound(e->operands[0]);
        if (e.kind() == ExprKind::kFloorDiv) {
          if (!a) return std::nullopt;
          return IntRange{floor_div(a->min, c), floor_div(a->max, c)};
        }
        if (a && floor_div(a->min, c) == floor_div(a->max, c))
          return IntRange{floor_mod(a->min, c), floor_mod(a->max, c)};
        return IntRange{0, c - 1};
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        auto a = bound(e->operands[0]), b = bound(e->operands[1]);
        if (!a || !b) return std::nullopt;
        if (e.kind() == ExprKind::kMin) return IntRange{std::min(a->min, b->min), std::min(a->max, b->max)};
        return IntRange{std::max(a->min, b->min), std::max(a->max, b->max)};
      }
      case ExprKind::kSelect: {
        auto a = bound(e->operands[1]), b = bound(e->operands[2]);
        if (!a || !b) return std::nullopt;
        return IntRange{std::min(a->min, b->min), std::max(a->max, b->max)};
      }
      case ExprKind::kMul: {
        auto a = bound(e->operands[0]), b = bound(e->operands[1]);
        if (!a || !b) return std::nullopt;
        int64_t corners[4];
        if (!checked_mul(a->min, b->min, &corners[0]) || !checked_mul(a->min, b->max, &corners[1]) ||
            !checked_mul(a->max, b->min, &corners[2]) || !checked_mul(a->max, b->max, &corners[3]))
          return std::nullopt;
        return IntRange{*std::min_element(corners, corners + 4), *std::max_element(corners, corners + 4)};
      }
      default: return std::nullopt;
    }
  }

  // Canonical order: larger coefficients first (row-major index order), then by text.
  PrimExpr to_expr(LinearForm form, DType dtype) {
    std::vector<std::pair<std::string, size_t>> order;
    for (size_t i = 0; i < form.terms.size(); ++i) order.emplace_back(to_string(form.terms[i].first), i);
    std::stable_sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
      int64_t cx = form.terms[x.second].second, cy = form.terms[y.second].second;
      bool nx = cx < 0, ny = cy < 0;
      if (nx != ny) return !nx;  // positive terms first
      int64_t ax = nx ? -cx : cx, ay = ny ? -cy : cy;
      if (ax != ay) return ax > ay;
      return x.first < y.first;
    });
    PrimExpr result;
    auto term_expr = [&](const PrimExpr& atom, int64_t coeff) {
      return coeff == 1 ? atom : mul(atom, int_imm(coeff, dtype));
    };
    bool constant_used = false;
    for (const auto& [text, index] : order) {
      const auto& [atom, coeff] = form.terms[index];
      if (!result.defined()) {
        if (coeff > 0) {
          result = term_expr(atom, coeff);
          continue;
        }
        if (form.constant != 0) {
          result = int_imm(form.constant, dtype);
          constant_used = true;
        } else {
          result = term_expr(atom, coeff);
          continue;
        }
      }
      result = coeff > 0 ? add(result, term_expr(atom, coeff)) : sub(result, term_expr(atom, -coeff));
    }
    if (!result.defined()) return int_imm(form.constant, dtype);
    if (!constant_used && form.constant > 0) result = add(result, int_imm(form.constant, dtype));
    if (!constant_used && form.constant < 0 && form.constant != std::numeric_limits<int64_t>::min())
      result = sub(result, int_imm(-form.constant, dtype));
    else if (!constant_used && form.constant < 0)
      result = add(result, int_imm(form.constant, dtype));
    return result;
  }

  PrimExpr simplify_generic(const PrimExpr& e) {
    if (e->operands.empty()) return e;
    std::vector<PrimExpr> ops;
    for (const auto& op : e->operands) ops.push_back(simplify(op));
    PrimExpr s = with_operands(e, ops);
    switch (s.kind()) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMin:
      case ExprKind::kMax: return fold_arith(s);
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: return fold_float_divmod(s);
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE: return fold_compare(s);
      case ExprKind::kAnd:
      case ExprKind::kOr: return fold_logic(s);
      case ExprKind::kNot: {
        const PrimExpr& a = s->operands[0];
        if (a.is_int_imm()) return bool_imm(a->int_value == 0);
        if (a.kind() == ExprKind::kNot) return a->operands[0];
        return s;
      }
      case ExprKind::kSelect: {
        const PrimExpr& c = s->operands[0];
        if (c.is_int_imm()) return c->int_value != 0 ? s->operands[1] : s->operands[2];
        if (expr_equal(s->operands[1], s->operands[2])) return s->operands[1];
        return s;
      }
      case ExprKind::kCast: return fold_cast(s);
      default: return s;
    }
  }

  static bool is_const(const PrimExpr& e) { return e.kind() == ExprKind::kIntImm || e.kind() == ExprKind::kFloatImm; }
  static double const_value(const PrimExpr& e) {
    return e.kind() == ExprKind::kIntImm ? double(e->int_value) : e->float_value;
  }

  PrimExpr fold_arith(const PrimExpr& s) {
    const PrimExpr &a = s->operands[0], &b = s->operands[1];
    if (is_float(s.dtype())) {
      if (!is_const(a) || !is_const(b)) return s;
      double x = a->float_value, y = b->float_value, r = 0;
      switch (s.kind()) {
        case ExprKind::kAdd: r = x + y; break;
        case ExprKind::kSub: r = x - y; break;
        case ExprKind::kMul: r = x * y; break;
        case ExprKind::kDiv:
          if (y == 0) return s;
          r = x / y;
          break;
        case ExprKind::kMin: r = std::min(x, y); break;
        default: r = std::max(x, y); break;
      }
      return float_imm(r, s.dtype());
    }
    if (!is_int(s.dtype())) return s;
    if (s.kind() == ExprKind::kDiv) {
      if (b.is_const_int(1)) return a;
      if (a.is_int_imm() && b.is_int_imm() && b->int_value != 0 &&
          !(a->int_value == std::numeric_limits<int64_t>::min() && b->int_value == -1))
        return int_imm(a->int_value / b->int_value, s.dtype());
      // Truncating and flooring division agree on non-negative operands.
      if (b.is_int_imm() && b->int_value > 0 && analyzer_.is_non_negative(a)) return simplify(floordiv(a, b));
      return s;
    }
    if (s.kind() == ExprKind::kMin || s.kind() == ExprKind::kMax) {
      auto d = bound(sub(a, b));
      bool is_min = s.kind() == ExprKind::kMin;
      if (d && d->max <= 0) return is_min ? a : b;
      if (d && d->min >= 0) return is_min ? b : a;
      return s;
    }
    return s;
  }

  PrimExpr fold_float_divmod(const PrimExpr& s) {
    const PrimExpr &a = s->operands[0], &b = s->operands[1];
    if (!is_float(s.dtype()) || !is_const(a) || !is_const(b) || b->float_value == 0) return s;
    double q = std::floor(a->float_value / b->float_value);
    return float_imm(s.kind() == ExprKind::kFloorDiv ? q : a->float_value - q * b->float_value, s.dtype());
  }

  PrimExpr fold_compare(const PrimExpr& s) {
    const PrimExpr &a = s->operands[0], &b = s->operands[1];
    std::optional<IntRange> d;  // range of a - b
    if (is_const(a) && is_const(b)) {
      double x = const_value(a), y = const_value(b);
      switch (s.kind()) {
        case ExprKind::kEQ: return bool_imm(x == y);
        case ExprKind::kNE: return bool_imm(x != y);
        case ExprKind::kLT: return bool_imm(x < y);
        case ExprKind::kLE: return bool_imm(x <= y);
        case ExprKind::kGT: return bool_imm(x > y);
        default: return bool_imm(x >= y);
      }
    }
    if (!is_int(a.dtype())) return s;
    d = bound(sub(a, b));
    if (!d) return s;
    switch (s.kind()) {
      case ExprKind::kEQ:
        if (d->min == 0 && d->max == 0) return bool_imm(true);
        if (d->min > 0 || d->max < 0) return bool_imm(false);
        return s;
      case ExprKind::kNE:
        if (d->min == 0 && d->max == 0) return bool_imm(false);
        if (d->min > 0 || d->max < 0) return bool_imm(true);
        return s;
      case ExprKind::kLT:
        if (d->max < 0) return bool_imm(true);
        if (d->min >= 0) return bool_imm(false);
        return s;
      case ExprKind::kLE:
        if (d->max <= 0) return bool_imm(true);
        if (d->min > 0) return bool_imm(false);
        return s;
      case ExprKind::kGT:
        if (d->min > 0) return bool_imm(true);
        if (d->max <= 0) return bool_imm(false);
        return s;
      default:
        if (d->min >= 0) return bool_imm(true);
        if (d->max < 0) return bool_imm(false);
        return s;
    }
  }

  static PrimExpr fold_logic(const PrimExpr& s) {
    const PrimExpr &a = s->operands[0], &b = s->operands[1];
    bool is_and = s.kind() == ExprKind::kAnd;
    for (int side = 0; side < 2; ++side) {
      const PrimExpr& c = side == 0 ? a : b;
      const PrimExpr& other = side == 0 ? b : a;
      if (!c.is_int_imm()) continue;
      bool value = c->int_value != 0;
      if (is_and) return value ? other : bool_imm(false);
      return value ? bool_imm(true) : other;
    }
    return s;
  }

  static PrimExpr fold_cast(const PrimExpr& s) {
    const PrimExpr& a = s->operands[0];
    if (!is_const(a)) return s;
    double v = const_value(a);
    if (s.dtype() == DType::kBool) return bool_imm(v != 0);
    if (is_float(s.dtype())) return float_imm(v, s.dtype());
    if (is_int(s.dtype())) {
      if (a.kind() == ExprKind::kIntImm && s.dtype() == DType::kInt64) return int_imm(a->int_value);
      // Only fold conversions that are exact in C (no overflow, truncation toward zero).
      double t = std::trunc(v);
      if (std::isfinite(t) && std::fabs(t) < 2147483648.0) return int_imm(static_cast<int64_t>(t), s.dtype());
    }
    return s;
  }

  const Analyzer& analyzer_;
};

class StmtSimplifier : public Mutator {
 public:
  explicit StmtSimplifier(Analyzer analyzer) : analyzer_(std::move(analyzer)) {}

  PrimExpr mutate_expr(const PrimExpr& e) override { return analyzer_.simplify(e); }

  Stmt mutate_stmt(const Stmt& s) override {
    if (const auto* f = s.as<For>()) return simplify_for(*f);
    if (const auto* n = s.as<IfThenElse>()) {
      PrimExpr c = analyzer_.simplify(n->condition);
      if (c.is_int_imm()) {
        if (c->int_value != 0) return mutate_stmt(n->then_case);
        return n->else_case.defined() ? mutate_stmt(n->else_case) : no_op();
      }
      Stmt then_case = mutate_stmt(n->then_case);
      Stmt else_case = n->else_case.defined() ? mutate_stmt(n->else_case) : Stmt();
      if (else_case.defined() && else_case.is_no_op()) else_case = Stmt();
      if (then_case.is_no_op() && !else_case.defined()) return no_op();
      return IfThenElse{c, then_case, else_case};
    }
    if (const auto* n = s.as<LetStmt>()) {
      PrimExpr value = analyzer_.simplify(n->value);
      if (value.kind() == ExprKind::kIntImm || value.kind() == ExprKind::kFloatImm || value.kind() == ExprKind::kVar)
        return mutate_stmt(substitute(n->body, {{n->var.get(), value}}));
      return LetStmt{n->var, value, mutate_stmt(n->body)};
    }
    if (const auto* n = s.as<SeqStmt>()) {
      std::vector<Stmt> stmts;
      for (const auto& c : n->stmts) stmts.push_back(mutate_stmt(c));
      return seq(std::move(stmts));
    }
    if (const auto* n = s.as<Allocate>()) {
      Stmt body = mutate_stmt(n->body);
      return body.is_no_op() ? body : Stmt(Allocate{n->buffer, body});
    }
    return mutate_stmt_children(s);
  }

 private:
  Stmt simplify_for(const For& f) {
    PrimExpr min = analyzer_.simplify(f.min), extent = analyzer_.simplify(f.extent);
    if (extent.is_int_imm() && extent->int_value <= 0) return no_op();
    if (extent.is_const_int(1)) return mutate_stmt(substitute(f.body, {{f.loop_var.get(), min}}));
    bool bounded = min.is_int_imm() && extent.is_int_imm();
    if (bounded) analyzer_.bind(f.loop_var, min->int_value, extent->int_value);
    Stmt body = mutate_stmt(f.body);
    if (bounded) analyzer_.unbind(f.loop_var);
    if (body.is_no_op()) return body;
    return For{f.loop_var, min, extent, f.kind, body};
  }

  Analyzer analyzer_;
};

}  // namespace

void Analyzer::bind(const Var& v, int64_t min, int64_t extent) { ranges_[v.get()] = IntRange{min, min + extent - 1}; }
void Analyzer::unbind(const Var& v) { ranges_.erase(v.get()); }

std::optional<IntRange> Analyzer::var_range(const PrimExpr& v) const {
  auto it = ranges_.find(v.get());
  if (it == ranges_.end()) return std::nullopt;
  return it->second;
}

std::optional<IntRange> Analyzer::bound(const PrimExpr& e) const { return ExprSimplifier(*this).bound(e); }
PrimExpr Analyzer::simplify(const PrimExpr& e) const { return ExprSimplifier(*this).simplify(e); }

bool Analyzer::can_prove(const PrimExpr& condition) const {
  PrimExpr c = simplify(condition);
  return c.is_int_imm() && c->int_value != 0;
}

bool Analyzer::is_non_negative(const PrimExpr& e) const {
  auto r = bound(e);
  return r && r->min >= 0;
}

PrimExpr simplify(const PrimExpr& e) { return Analyzer().simplify(e); }

Stmt simplify(const Stmt& s, Analyzer analyzer) { return StmtSimplifier(std::move(analyzer)).mutate_stmt(s); }

PrimFunc simplify(const PrimFunc& f) { return PrimFunc{f.name, f.params, simplify(f.body)}; }

}  // namespace kiln::tir
