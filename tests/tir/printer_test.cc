#include "kiln/tir/printer.h"

#include <gtest/gtest.h>

namespace kiln::tir {
namespace {

TEST(TirPrinter, PrintsExpressionsWithMinimalParentheses) {
  Var i("i"), j("j");
  Var x("x", DType::kFloat32);
  EXPECT_EQ(to_string((i + j) * 4), "(i + j) * 4");
  EXPECT_EQ(to_string(i + j * 4), "i + j * 4");
  EXPECT_EQ(to_string(i - (j - 1)), "i - (j - 1)");
  EXPECT_EQ(to_string(floordiv(i, 4) + floormod(j, 2)), "i // 4 + j % 2");
  EXPECT_EQ(to_string(logical_and(lt(i, 3), logical_not(eq(j, 0)))), "i < 3 and not j == 0");
  EXPECT_EQ(to_string(select(lt(i, j), call("exp", {x}), float_imm(0.5))), "select(i < j, exp(x), 0.5f)");
  EXPECT_EQ(to_string(cast(DType::kFloat32, i)), "float32(i)");
  EXPECT_EQ(to_string(int_imm(7, DType::kInt32)), "int32(7)");
  Buffer a = make_buffer("A", DType::kFloat32, {4, 8});
  EXPECT_EQ(to_string(load(a, {i, j + 1})), "A[i, j + 1]");
  EXPECT_EQ(to_string(extern_call("f", {address_of(a, {i, 0}), 8})), "call_extern(\"f\", address_of(A[i, 0]), 8)");
}

TEST(TirPrinter, PrintsFunctions) {
  Buffer a = make_buffer("A", DType::kFloat32, {4});
  Buffer b = make_buffer("B", DType::kFloat32, {4});
  Buffer t = make_buffer("T", DType::kFloat32, {2});
  Var i("i"), k("k");
  Stmt body =
      for_loop(i, 0, 4, ForKind::kParallel,
               Allocate{t, seq({for_loop(k, 0, 2, ForKind::kVectorized, store(t, {k}, load(a, {i}) + float_imm(1))),
                                IfThenElse{lt(i, 2), store(b, {i}, load(t, {0})), store(b, {i}, load(t, {1}))}})});
  PrimFunc f{"f", {a, b}, body};
  EXPECT_EQ(to_string(f),
            "@prim_func\n"
            "def f(A: Buffer((4,), \"float32\"), B: Buffer((4,), \"float32\")):\n"
            "  for i in parallel(4):\n"
            "    with allocate(T, Buffer((2,), \"float32\")):\n"
            "      for k in vectorized(2):\n"
            "        T[k] = A[i] + 1.0f\n"
            "      if i < 2:\n"
            "        B[i] = T[0]\n"
            "      else:\n"
            "        B[i] = T[1]\n");
}

}  // namespace
}  // namespace kiln::tir
