#include "kiln/te/lower.h"

#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "kiln/tir/printer.h"

namespace kiln::te {
namespace {

using tir::float_imm;

Tensor matmul(const Tensor& a, const Tensor& b, const std::string& name = "C") {
  IterVar k = reduce_axis(a.shape()[1], "k");
  return compute({a.shape()[0], b.shape()[1]}, name,
                 [&](const Indices& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); });
}

// 2-D convolution of an 8x8 image with a 3x3 filter, zero padding 1 (a separate pad stage).
struct Conv {
  Tensor x = placeholder({8, 8}, DType::kFloat32, "X");
  Tensor w = placeholder({3, 3}, DType::kFloat32, "W");
  Tensor pad = compute({10, 10}, "pad", [&](const Indices& i) {
    PrimExpr rows = tir::logical_and(tir::ge(i[0], 1), tir::lt(i[0], 9));
    PrimExpr cols = tir::logical_and(tir::ge(i[1], 1), tir::lt(i[1], 9));
    return tir::select(tir::logical_and(rows, cols), x(i[0] - 1, i[1] - 1), float_imm(0));
  });
  IterVar r = reduce_axis(3, "r");
  IterVar q = reduce_axis(3, "q");
  Tensor out = compute({8, 8}, "out", [&](const Indices& i) { return sum(pad(i[0] + r, i[1] + q) * w(r, q), {r, q}); });
};

TEST(TeLower, ElementwiseComputeBecomesOneLoopNest) {
  Tensor a = placeholder({4, 8}, DType::kFloat32, "A");
  Tensor b = compute({4, 8}, "B", [&](const Indices& i) { return tir::call("exp", {a(i[0], i[1]) * 2}); });
  Schedule s({b});
  EXPECT_EQ(tir::to_string(lower(s, {a, b}, "f")),
            "@prim_func\n"
            "def f(A: Buffer((4, 8), \"float32\"), B: Buffer((4, 8), \"float32\")):\n"
            "  for i in range(4):\n"
            "    for j in range(8):\n"
            "      B[i, j] = exp(A[i, j] * 2.0f)\n");
}

TEST(TeLower, MatmulWithSplitReorderVectorizeParallel) {
  Tensor a = placeholder({64, 64}, DType::kFloat32, "A");
  Tensor b = placeholder({64, 64}, DType::kFloat32, "B");
  Tensor c = matmul(a, b);
  Schedule s({c});
  auto [io, ii] = s[c].split(s[c].axis(0), 4);
  auto [jo, ji] = s[c].split(s[c].axis(1), 16);
  IterVar k = s[c].reduce_axis(0);
  s[c].reorder({io, jo, k, ii, ji});
  s[c].vectorize(ji);
  s[c].parallel(io);
  // The initialisation sits just outside the first reduce loop and covers the data-parallel
  // loops inside it.
  EXPECT_EQ(tir::to_string(lower(s, {a, b, c}, "matmul")),
            "@prim_func\n"
            "def matmul(A: Buffer((64, 64), \"float32\"), B: Buffer((64, 64), \"float32\"), C: Buffer((64, 64), "
            "\"float32\")):\n"
            "  for i_outer in parallel(16):\n"
            "    for j_outer in range(4):\n"
            "      for i_inner in range(4):\n"
            "        for j_inner in vectorized(16):\n"
            "          C[i_outer * 4 + i_inner, j_outer * 16 + j_inner] = 0.0f\n"
            "      for k in range(64):\n"
            "        for i_inner in range(4):\n"
            "          for j_inner in vectorized(16):\n"
            "            C[i_outer * 4 + i_inner, j_outer * 16 + j_inner] = C[i_outer * 4 + i_inner, j_outer * 16 + "
            "j_inner] + A[i_outer * 4 + i_inner, k] * B[k, j_outer * 16 + j_inner]\n");
}

TEST(TeLower, FuseAndNonDividingSplitGuardTheBody) {
  Tensor a = placeholder({3, 5}, DType::kFloat32, "A");
  Tensor b = compute({3, 5}, "B", [&](const Indices& i) { return a(i[0], i[1]) + 1; });
  Schedule s({b});
  IterVar fused = s[b].fuse(s[b].axis(0), s[b].axis(1));
  auto [o, in] = s[b].split(fused, 4);
  s[b].vectorize(in);
  EXPECT_EQ(tir::to_string(lower(s, {a, b}, "f")),
            "@prim_func\n"
            "def f(A: Buffer((3, 5), \"float32\"), B: Buffer((3, 5), \"float32\")):\n"
            "  for i_j_fused_outer in range(4):\n"
            "    for i_j_fused_inner in vectorized(4):\n"
            "      if i_j_fused_outer * 4 + i_j_fused_inner < 15:\n"
            "        B[(i_j_fused_outer * 4 + i_j_fused_inner) // 5, (i_j_fused_outer * 4 + i_j_fused_inner) % 5] = "
            "A[(i_j_fused_outer * 4 + i_j_fused_inner) // 5, (i_j_fused_outer * 4 + i_j_fused_inner) % 5] + 1.0f\n");
}

TEST(TeLower, ComputeInlineSubstitutesTheProducer) {
  Conv conv;
  Schedule s({conv.out});
  s[conv.pad].compute_inline();
  EXPECT_EQ(tir::to_string(lower(s, {conv.x, conv.w, conv.out}, "conv")),
            "@prim_func\n"
            "def conv(X: Buffer((8, 8), \"float32\"), W: Buffer((3, 3), \"float32\"), out: Buffer((8, 8), "
            "\"float32\")):\n"
            "  for i in range(8):\n"
            "    for j in range(8):\n"
            "      out[i, j] = 0.0f\n"
            "      for r in range(3):\n"
            "        for q in range(3):\n"
            "          out[i, j] = out[i, j] + select(i + r >= 1 and i + r < 9 and (j + q >= 1 and j + q < 9), "
            "X[i + r - 1, j + q - 1], 0.0f) * W[r, q]\n");
}

TEST(TeLower, ComputeAtInfersTheRegionTheConsumerReads) {
  Conv conv;
  Schedule s({conv.out});
  auto [io, ii] = s[conv.out].split(s[conv.out].axis(0), 2);
  s[conv.pad].compute_at(s[conv.out], io);
  // Two output rows read four padded rows: pad is realised as 4x10, offset by i_outer * 2.
  EXPECT_EQ(tir::to_string(lower(s, {conv.x, conv.w, conv.out}, "conv")),
            "@prim_func\n"
            "def conv(X: Buffer((8, 8), \"float32\"), W: Buffer((3, 3), \"float32\"), out: Buffer((8, 8), "
            "\"float32\")):\n"
            "  for i_outer in range(4):\n"
            "    with allocate(pad, Buffer((4, 10), \"float32\")):\n"
            "      for i in range(4):\n"
            "        for j in range(10):\n"
            "          pad[i, j] = select(i_outer * 2 + i >= 1 and i_outer * 2 + i < 9 and (j >= 1 and j < 9), "
            "X[i_outer * 2 + i - 1, j - 1], 0.0f)\n"
            "      for i_inner in range(2):\n"
            "        for j in range(8):\n"
            "          out[i_outer * 2 + i_inner, j] = 0.0f\n"
            "          for r in range(3):\n"
            "            for q in range(3):\n"
            "              out[i_outer * 2 + i_inner, j] = out[i_outer * 2 + i_inner, j] + pad[i_inner + r, j + q] * "
            "W[r, q]\n");
}

TEST(TeLower, ComputeAtCoversStagesAttachedAtTheSameLoop) {
  // x - max(x) by rows, then its row sum: M is read by D and by S, both computed at S's consumer's
  // loop; M and D are realised for one block of two rows (softmax inside nn.attention's blocks).
  Tensor x = placeholder({4, 3}, DType::kFloat32, "X");
  IterVar k = reduce_axis(3, "k"), l = reduce_axis(3, "l");
  Tensor m = compute({4}, "M", [&](const Indices& i) { return te::max(x(i[0], k), {k}); });
  Tensor d = compute({4, 3}, "D", [&](const Indices& i) { return x(i[0], i[1]) - m(i[0]); });
  Tensor s = compute({4}, "S", [&](const Indices& i) { return sum(d(i[0], l) + m(i[0]), {l}); });
  Tensor out = compute({4}, "out", [&](const Indices& i) { return s(i[0]) * 2; });
  Schedule sch({out});
  auto [io, ii] = sch[out].split(sch[out].axis(0), 2);
  (void)ii;
  for (const Tensor& t : {m, d, s}) sch[t].compute_at(sch[out], io);
  const std::string text = tir::to_string(lower(sch, {x, out}, "rows"));
  EXPECT_NE(text.find("allocate(M, Buffer((2,), \"float32\"))"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate(D, Buffer((2, 3), \"float32\"))"), std::string::npos) << text;
  // A reader elsewhere still cannot see the block.
  Tensor other = compute({4}, "other", [&](const Indices& i) { return m(i[0]) + 1; });
  Schedule sch2({out, other});
  auto [jo, ji] = sch2[out].split(sch2[out].axis(0), 2);
  (void)ji;
  for (const Tensor& t : {m, d, s}) sch2[t].compute_at(sch2[out], jo);
  EXPECT_THROW(lower(sch2, {x, out, other}, "rows"), Error);
}

TEST(TeLower, CacheWriteComputesATileLocally) {
  Conv conv;
  Schedule s({conv.out});
  Tensor local = s.cache_write(conv.out);
  EXPECT_EQ(local.name(), "out.local");
  auto [io, ii] = s[conv.out].split(s[conv.out].axis(0), 2);
  auto [jo, ji] = s[conv.out].split(s[conv.out].axis(1), 4);
  s[conv.out].reorder({io, jo, ii, ji});
  s[local].compute_at(s[conv.out], jo);
  s[conv.pad].compute_inline();
  s[conv.out].vectorize(ji);
  std::string text = tir::to_string(lower(s, {conv.x, conv.w, conv.out}, "conv"));
  EXPECT_NE(text.find("  for i_outer in range(4):\n"
                      "    for j_outer in range(2):\n"
                      "      with allocate(out.local, Buffer((2, 4), \"float32\")):\n"
                      "        for i in range(2):\n"
                      "          for j in range(4):\n"
                      "            out.local[i, j] = 0.0f\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("X[i_outer * 2 + i + r - 1, j_outer * 4 + j + q - 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("        for i_inner in range(2):\n"
                      "          for j_inner in vectorized(4):\n"
                      "            out[i_outer * 2 + i_inner, j_outer * 4 + j_inner] = out.local[i_inner, j_inner]\n"),
            std::string::npos)
      << text;
}

TEST(TeLower, TensorizeReplacesTheTileByTheMicroKernel) {
  Tensor a = placeholder({64, 64}, DType::kFloat32, "A");
  Tensor b = placeholder({64, 64}, DType::kFloat32, "B");
  Tensor c = matmul(a, b);
  Schedule s({c});
  auto [io, ii] = s[c].split(s[c].axis(0), 4);
  auto [jo, ji] = s[c].split(s[c].axis(1), 16);
  s[c].reorder({io, jo, ii, ji, s[c].reduce_axis(0)});
  s[c].tensorize(ii, gemm_f32_intrin(4, 16, 64));
  EXPECT_EQ(tir::to_string(lower(s, {a, b, c}, "matmul")),
            "@prim_func\n"
            "def matmul(A: Buffer((64, 64), \"float32\"), B: Buffer((64, 64), \"float32\"), C: Buffer((64, 64), "
            "\"float32\")):\n"
            "  for i_outer in range(16):\n"
            "    for j_outer in range(4):\n"
            "      for i_inner in range(4):\n"
            "        for j_inner in range(16):\n"
            "          C[i_outer * 4 + i_inner, j_outer * 16 + j_inner] = 0.0f\n"
            "      call_extern(\"kiln_sgemm_f32_4x16\", 64, address_of(A[i_outer * 4, 0]), 64, address_of(B[0, "
            "j_outer * 16]), 64, address_of(C[i_outer * 4, j_outer * 16]), 64)\n");
}

TEST(TeLower, TensorizeRejectsMismatchedLoops) {
  Tensor a = placeholder({64, 64}, DType::kFloat32, "A");
  Tensor b = placeholder({64, 64}, DType::kFloat32, "B");
  Tensor c = matmul(a, b);
  {
    Schedule s({c});
    auto [io, ii] = s[c].split(s[c].axis(0), 8);  // 8 rows, the intrinsic has 4
    auto [jo, ji] = s[c].split(s[c].axis(1), 16);
    s[c].reorder({io, jo, ii, ji, s[c].reduce_axis(0)});
    s[c].tensorize(ii, gemm_f32_intrin(4, 16, 64));
    try {
      lower(s, {a, b, c}, "matmul");
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("loop of 'i' has extent 8, the intrinsic's 4"), std::string::npos)
          << e.what();
    }
  }
  {
    Tensor sum_ab = compute({64, 64}, "D", [&](const Indices& i) { return a(i[0], i[1]) + b(i[0], i[1]); });
    Schedule s({sum_ab});
    auto [io, ii] = s[sum_ab].split(s[sum_ab].axis(0), 4);
    s[sum_ab].tensorize(ii, gemm_f32_intrin(4, 64, 64));
    EXPECT_THROW(lower(s, {a, b, sum_ab}, "add"), Error);
  }
}

TEST(TeLower, ReportsScheduleMistakes) {
  Tensor a = placeholder({4}, DType::kFloat32, "A");
  Tensor b = compute({4}, "B", [&](const Indices& i) { return a(i[0]) * 2; });
  Tensor c = compute({4}, "C", [&](const Indices& i) { return b(i[0]) + 1; });
  Schedule s({c});
  EXPECT_THROW(s[c].split(s[b].axis(0), 2), Error);  // another stage's loop
  EXPECT_THROW(s[c].split(s[c].axis(0), 0), Error);
  EXPECT_THROW(s[a].compute_inline(), Error);
  EXPECT_THROW(s[c].axis(1), Error);
  try {
    lower(s, {c}, "f");  // A is read but not passed
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("placeholder 'A' is read but not an argument"), std::string::npos) << e.what();
  }
  s[c].compute_inline();
  EXPECT_THROW(lower(s, {a, c}, "f"), Error);  // an output cannot be inlined
  {
    Schedule s3({c});
    s3[b].compute_at(s3[c], s3[c].axis(0));
    s3[c].split(s3[c].axis(0), 2);  // the attach loop is gone
    EXPECT_THROW(lower(s3, {a, c}, "f"), Error);
  }
  {
    Tensor d = compute({4}, "D", [&](const Indices& i) { return a(i[0]) * 3; });
    Schedule s4({d, c});
    s4[b].compute_at(s4[d], s4[d].axis(0));  // D does not read B
    EXPECT_THROW(lower(s4, {a, d, c}, "f"), Error);
  }
  IterVar k = reduce_axis(4, "k");
  Tensor total = compute({1}, "T", [&](const Indices&) { return sum(a(k), {k}); });
  Schedule s2({total});
  EXPECT_THROW(s2[total].parallel(k), Error);
  EXPECT_THROW(s2[total].vectorize(k), Error);
  EXPECT_THROW(s2[total].compute_inline(), Error);
}

TEST(TeTensor, ComputeChecksShapesAndIndices) {
  Tensor a = placeholder({2, 3}, DType::kFloat32, "A");
  EXPECT_THROW(a(0), Error);
  EXPECT_THROW(placeholder({2, 0}, DType::kFloat32, "Z"), Error);
  Tensor b = compute({2, 3}, "B", [&](const Indices& i) { return a(i[0], i[1]); });
  ASSERT_EQ(b.op()->inputs.size(), 1u);
  EXPECT_TRUE(b.op()->inputs[0].same_as(a));
  IterVar k = reduce_axis(3, "k");
  Tensor m = compute({2}, "M", [&](const Indices& i) { return te::max(a(i[0], k), {k}); });
  EXPECT_EQ(tir::to_string(m.op()->init), "-inf");
}

}  // namespace
}  // namespace kiln::te
