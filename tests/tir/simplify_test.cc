#include "kiln/tir/simplify.h"

#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "kiln/tir/functor.h"
#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

std::string simplified(const PrimExpr& e, const Analyzer& a = {}) { return to_string(a.simplify(e)); }

TEST(TirSimplify, FoldsConstants) {
  EXPECT_EQ(simplified(PrimExpr(3) * 4 + 5), "17");
  EXPECT_EQ(simplified(floordiv(-7, 2)), "-4");
  EXPECT_EQ(simplified(floormod(-7, 2)), "1");
  EXPECT_EQ(simplified(PrimExpr(7) / 2), "3");
  EXPECT_EQ(simplified(float_imm(1.5) * float_imm(2.0)), "3.0f");
  EXPECT_EQ(simplified(lt(3, 4)), "True");
  EXPECT_EQ(simplified(cast(DType::kFloat32, 3)), "3.0f");
  EXPECT_EQ(simplified(call("exp", {float_imm(0)})), "exp(0.0f)");  // calls are not evaluated
}

TEST(TirSimplify, CollectsLinearTerms) {
  Var i("i"), j("j");
  EXPECT_EQ(simplified(j + i * 4 + 2 - i), "i * 3 + j + 2");
  EXPECT_EQ(simplified((i + 1) * 8 - i * 8), "8");
  EXPECT_EQ(simplified(i - j * 2), "i - j * 2");
  EXPECT_EQ(simplified(0 - i), "i * (-1)");
  EXPECT_EQ(simplified(PrimExpr(5) - i), "5 - i");
  EXPECT_EQ(simplified(i * j + j * i), "i * j * 2");
}

TEST(TirSimplify, FoldsDivModWithBounds) {
  Var io("io"), ii("ii"), f("f");
  Analyzer a;
  a.bind(io, 0, 16);
  a.bind(ii, 0, 4);
  // Split then recovered: (io * 4 + ii) // 4 == io, % 4 == ii.
  EXPECT_EQ(simplified(floordiv(io * 4 + ii, 4), a), "io");
  EXPECT_EQ(simplified(floormod(io * 4 + ii, 4), a), "ii");
  // A fused index split by a divisor of the inner extent.
  EXPECT_EQ(simplified(floordiv(io * 4 + ii, 8), a), "io // 2");
  EXPECT_EQ(simplified(floormod(io * 4 + ii, 8), a), "io % 2 * 4 + ii");
  EXPECT_EQ(simplified(floordiv(ii, 4), a), "0");
  EXPECT_EQ(simplified(floormod(ii + 4, 4), a), "ii");
  EXPECT_EQ(simplified(floordiv(floordiv(f, 4), 2)), "f // 8");
  // Without bounds nothing is assumed.
  EXPECT_EQ(simplified(floordiv(f * 4 + ii, 4)), "(f * 4 + ii) // 4");
}

TEST(TirSimplify, MergesTheQuotientAndRemainderOfOneDivision) {
  Var f("f"), g("g");
  // A fused loop's row and column put back together as a row-major offset.
  EXPECT_EQ(simplified(floordiv(f, 7) * 7 + floormod(f, 7)), "f");
  EXPECT_EQ(simplified(floordiv(f, 9) * 81 + floormod(f, 9) * 9 + g), "f * 9 + g");
  EXPECT_EQ(simplified(floormod(f + g, 5) + floordiv(f + g, 5) * 5 - g), "f");
  // Different divisions, or coefficients out of proportion, stay.
  EXPECT_EQ(simplified(floordiv(f, 7) * 7 + floormod(g, 7)), "f // 7 * 7 + g % 7");
  EXPECT_EQ(simplified(floordiv(f, 7) * 6 + floormod(f, 7)), "f // 7 * 6 + f % 7");
}

TEST(TirSimplify, MergesRowAndColumnOfOnePlane) {
  Var f("f"), o("o"), k("k");
  // The row (x // 7 % 7) and column (x % 7) of a 7x7 plane: the offset in the plane, x % 49.
  EXPECT_EQ(simplified(floormod(floordiv(f, 7), 7) * 7 + floormod(f, 7)), "f % 49");
  EXPECT_EQ(simplified(floormod(floordiv(f, 7), 7) * 14 + floormod(f, 7) * 2 + o), "f % 49 * 2 + o");
  // With the plane's offset known in range it folds away: a channel shuffle's copy of a plane.
  Analyzer a;
  a.bind(o, 0, 8);
  a.bind(k, 0, 49);
  const PrimExpr x = o * 2842 + k;
  EXPECT_EQ(simplified(floormod(floordiv(x, 7), 7) * 7 + floormod(x, 7), a), "k");
  // Other divisors or coefficients stay.
  EXPECT_EQ(simplified(floormod(floordiv(f, 7), 7) * 7 + floormod(f, 8)), "f // 7 % 7 * 7 + f % 8");
  EXPECT_EQ(simplified(floormod(floordiv(f, 7), 7) * 5 + floormod(f, 7)), "f // 7 % 7 * 5 + f % 7");
}

TEST(TirSimplify, DecidesComparisonsFromBounds) {
  Var i("i");
  Analyzer a;
  a.bind(i, 0, 10);
  EXPECT_EQ(simplified(lt(i, 10), a), "True");
  EXPECT_EQ(simplified(lt(i, 9), a), "i < 9");
  EXPECT_EQ(simplified(ge(i, 0), a), "True");
  EXPECT_EQ(simplified(logical_and(lt(i, 10), gt(i, 3)), a), "i > 3");
  EXPECT_EQ(simplified(min(i, 20), a), "i");
  EXPECT_EQ(simplified(max(i, 20), a), "20");
  EXPECT_EQ(simplified(select(lt(i, 100), i + 1, i), a), "i + 1");
  EXPECT_TRUE(a.can_prove(le(i * 2, 18)));
  EXPECT_FALSE(a.can_prove(le(i * 2, 17)));
  auto r = a.bound(i * 3 - 2);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->min, -2);
  EXPECT_EQ(r->max, 25);
}

TEST(TirSimplify, RemovesTrivialLoopsAndConditions) {
  Buffer b = make_buffer("B", DType::kFloat32, {8});
  Var i("i"), j("j");
  // for j in range(1): if i < 8: B[i + j] = 1  ->  B[i] = 1 inside the i loop
  Stmt inner = for_loop(j, 0, 1, ForKind::kSerial, IfThenElse{lt(i + j, 8), store(b, {i + j}, float_imm(1)), Stmt()});
  Stmt loop = for_loop(i, 0, 8, ForKind::kSerial, inner);
  EXPECT_EQ(to_string(simplify(loop)), "for i in range(8):\n  B[i] = 1.0f\n");
  // A loop of extent zero disappears, and with it an enclosing sequence.
  Stmt empty = for_loop(i, 0, 0, ForKind::kSerial, store(b, {i}, float_imm(0)));
  EXPECT_TRUE(simplify(seq({empty, empty})).is_no_op());
  // if(false) without else disappears; if(true) keeps its then-branch.
  Stmt guarded = IfThenElse{bool_imm(false), store(b, {0}, float_imm(2)), Stmt()};
  EXPECT_TRUE(simplify(guarded).is_no_op());
  Stmt kept = IfThenElse{lt(1, 2), store(b, {0}, float_imm(2)), store(b, {0}, float_imm(3))};
  EXPECT_EQ(to_string(simplify(kept)), "B[0] = 2.0f\n");
}

TEST(TirSimplify, SubstitutesTrivialLets) {
  Buffer b = make_buffer("B", DType::kInt64, {8});
  Var x("x");
  Stmt s = LetStmt{x, PrimExpr(3), store(b, {x}, x * 2)};
  EXPECT_EQ(to_string(simplify(s)), "B[3] = 6\n");
}

TEST(TirExpr, RejectsMixedDtypesAndBadIndices) {
  Var i("i");
  Var f("f", DType::kFloat32);
  EXPECT_THROW(add(i, f), Error);
  try {
    add(i, f);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected int64, found float32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(add(f, 2).dtype(), DType::kFloat32);  // immediates adopt the other side's dtype
  Buffer b = make_buffer("B", DType::kFloat32, {2, 3});
  EXPECT_THROW(load(b, {i}), Error);
  EXPECT_THROW(call("nope", {f}), Error);
  EXPECT_THROW(call("pow", {f}), Error);
  EXPECT_THROW(store(b, {i, i}, i), Error);
}

TEST(TirExpr, SubstituteReplacesVariablesByIdentity) {
  Var i("i"), other_i("i");
  PrimExpr e = i * 2 + other_i;
  EXPECT_EQ(to_string(simplify(substitute(e, {{i.get(), PrimExpr(5)}}))), "i + 10");
  EXPECT_TRUE(uses_var(e, other_i));
  EXPECT_FALSE(uses_var(PrimExpr(1) + 2, i));
}

}  // namespace
}  // namespace kiln::tir
