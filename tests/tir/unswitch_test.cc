#include "kiln/tir/unswitch.h"

#include <gtest/gtest.h>

#include "kiln/tir/printer.h"

namespace kiln::tir {
namespace {

// A concatenation of three inputs along the outer axis, as its compute writes it: the input is
// chosen by the row, so inside the vectorised loop over the row the selects are invariant.
TEST(TirUnswitch, HoistsInvariantSelectsOutOfVectorisedLoops) {
  Buffer a = make_buffer("A", DType::kFloat32, {2, 8});
  Buffer b = make_buffer("B", DType::kFloat32, {1, 8});
  Buffer c = make_buffer("C", DType::kFloat32, {1, 8});
  Buffer out = make_buffer("OUT", DType::kFloat32, {4, 8});
  Var i("i"), j("j");
  PrimExpr pick = select(lt(i, 3), select(lt(i, 2), load(a, {i, j}), load(b, {i - 2, j})), load(c, {i - 3, j}));
  Stmt body = for_loop(i, 0, 4, ForKind::kParallel,
                       for_loop(j, 0, 8, ForKind::kVectorized, store(out, {i, j}, pick * float_imm(2))));
  EXPECT_EQ(to_string(unswitch_vector_loops(body)),
            "for i in parallel(4):\n"
            "  if i < 3:\n"
            "    if i < 2:\n"
            "      for j in vectorized(8):\n"
            "        OUT[i, j] = A[i, j] * 2.0f\n"
            "    else:\n"
            "      for j in vectorized(8):\n"
            "        OUT[i, j] = B[i - 2, j] * 2.0f\n"
            "  else:\n"
            "    for j in vectorized(8):\n"
            "      OUT[i, j] = C[i - 3, j] * 2.0f\n");
}

// Selects on the loop's own variable, on a buffer the loop writes, and loops that are not vectorised stay as they
// are; the number of copies is bounded.
TEST(TirUnswitch, LeavesVaryingConditionsAndBoundsCopies) {
  Buffer a = make_buffer("A", DType::kFloat32, {8});
  Buffer flag = make_buffer("F", DType::kInt32, {1});
  Buffer out = make_buffer("OUT", DType::kFloat32, {8});
  Var i("i"), j("j");
  const PrimExpr varying = select(lt(j, 4), load(a, {j}), float_imm(0));
  const PrimExpr reads_written = select(gt(load(out, {0}), float_imm(0)), load(a, {j}), float_imm(0));
  for (const PrimExpr& value : {varying, reads_written}) {
    Stmt loop = for_loop(j, 0, 8, ForKind::kVectorized, store(out, {j}, value));
    EXPECT_EQ(to_string(unswitch_vector_loops(loop)), to_string(loop));
  }
  // A buffer whose address the loop passes to an extern call may be written by it.
  Stmt passes_address = for_loop(j, 0, 8, ForKind::kVectorized,
                                 seq({Evaluate{extern_call("f", {address_of(flag, {0})})},
                                      store(out, {j}, select(gt(load(flag, {0}), 0), load(a, {j}), float_imm(0)))}));
  EXPECT_EQ(to_string(unswitch_vector_loops(passes_address)), to_string(passes_address));
  // A buffer the loop only reads (avg_pool's counts per row) can decide.
  Stmt reads_other = for_loop(j, 0, 8, ForKind::kVectorized,
                              store(out, {j}, select(gt(load(flag, {0}), 0), load(a, {j}), float_imm(0))));
  EXPECT_EQ(to_string(unswitch_vector_loops(reads_other)),
            "if F[0] > int32(0):\n"
            "  for j in vectorized(8):\n"
            "    OUT[j] = A[j]\n"
            "else:\n"
            "  for j in vectorized(8):\n"
            "    OUT[j] = 0.0f\n");
  Stmt serial = for_loop(j, 0, 8, ForKind::kSerial, store(out, {j}, select(lt(i, 4), load(a, {j}), float_imm(0))));
  EXPECT_EQ(to_string(unswitch_vector_loops(serial)), to_string(serial));

  // Four invariant selects: 16 copies unbounded, 3 with max_copies = 3.
  PrimExpr value = load(a, {j});
  for (int k = 0; k < 4; ++k) value = select(lt(i, k), value + float_imm(1), value * float_imm(2));
  Stmt loop = for_loop(j, 0, 8, ForKind::kVectorized, store(out, {j}, value));
  auto loops_in = [](const Stmt& s) {
    const std::string text = to_string(s);
    size_t n = 0;
    for (size_t at = text.find("vectorized"); at != std::string::npos; at = text.find("vectorized", at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(loops_in(unswitch_vector_loops(loop)), 16u);
  EXPECT_EQ(loops_in(unswitch_vector_loops(loop, 3)), 3u);
}

}  // namespace
}  // namespace kiln::tir
