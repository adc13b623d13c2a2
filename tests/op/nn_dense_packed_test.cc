// nn.dense_packed: its relation, its reference kernel (against nn.dense on the unpacked weight)
// and its compute (generated code against the interpreter, the panel GEMM on odd sizes: units not
// a multiple of the panel, k = 1, one row, batch dimensions, a fused epilogue).
#include <gtest/gtest.h>

#include <string>

#include "kiln/attrs/layout.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "op/compute_test_util.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

TEST(NnDensePackedType, Shapes) {
  EXPECT_EQ(type_str(infer_op("nn.dense_packed", {f32({5, 10}), f32({3, 10, 32})}, {{"units", 70}})),
            "Tensor[(5, 70), float32]");
  EXPECT_EQ(type_str(infer_op("nn.dense_packed", {f32({2, -1, 10}), f32({1, 10, 32})}, {{"units", 32}})),
            "Tensor[(2, ?, 32), float32]");
}

TEST(NnDensePackedType, Errors) {
  std::string e = infer_op_error("nn.dense_packed", {f32({5, 10}), f32({3, 10, 32})}, {{"units", 64}});
  EXPECT_NE(e.find("'units'"), std::string::npos) << e;
  EXPECT_NE(e.find("(64, 96]"), std::string::npos) << e;
  e = infer_op_error("nn.dense_packed", {f32({5, 10}), f32({3, 9, 32})}, {{"units", 70}});
  EXPECT_NE(e.find("'weight' (3, 9, 32)"), std::string::npos) << e;
  e = infer_op_error("nn.dense_packed", {f32({5, 10}), f32({70, 10})}, {{"units", 70}});
  EXPECT_NE(e.find("argument 'weight'"), std::string::npos) << e;
  e = infer_op_error("nn.dense_packed", {tensor_type({5, 10}, DType::kInt32), tensor_type({3, 10, 32}, DType::kInt32)},
                     {{"units", 70}});
  EXPECT_NE(e.find("floating point"), std::string::npos) << e;
}

// (units, k) rows packed as PackDenseWeights does: zero rows up to a multiple of 32, then NK32n.
std::string packed(const std::string& w, int64_t units) {
  const int64_t pad = (32 - units % 32) % 32;
  return "layout_transform(nn.pad(" + w + ", 0f, pad_width=[[0, " + std::to_string(pad) +
         "], [0, 0]]), src_layout=\"NK\", dst_layout=\"NK32n\")";
}

NDArray evaluate(const std::string& fn_text, const std::vector<NDArray>& inputs) {
  Expr fn = parse_expr(fn_text);
  std::vector<Expr> args;
  for (const NDArray& a : inputs) args.push_back(make_constant(a));
  Expr call = make_call(fn, args);
  infer_expr_type(call);
  return interpret_expr(call).flatten().at(0);
}

// The reference kernel unpacks and runs nn.dense's arithmetic: bit-identical results.
TEST(NnDensePackedKernel, EqualsDenseOnTheUnpackedWeight) {
  struct Case {
    Shape x;
    int64_t units;
  };
  uint32_t seed = 1;
  for (const Case& c : {Case{{5, 10}, 70}, Case{{1, 1}, 3}, Case{{2, 3, 6}, 32}, Case{{7}, 33}}) {
    const int64_t k = c.x.back();
    const std::string params = "(%x: Tensor[" + shape_str(c.x) + ", float32], %w: Tensor[(" + std::to_string(c.units) +
                               ", " + std::to_string(k) + "), float32])";
    const std::vector<NDArray> inputs = {sample_tensor(c.x, seed++), sample_tensor({c.units, k}, seed++)};
    NDArray want = evaluate("fn " + params + " { nn.dense(%x, %w) }", inputs);
    NDArray got = evaluate("fn " + params + " { nn.dense_packed(%x, " + packed("%w", c.units) +
                               ", units=" + std::to_string(c.units) + ") }",
                           inputs);
    EXPECT_TRUE(want.same_as(got)) << "x " << shape_str(c.x) << " units " << c.units;
  }
}

CompareOptions product_tolerance() {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  return o;
}

std::string packed_fn(const std::string& x, int64_t panels, int64_t k, int64_t units, const std::string& tail = "") {
  return "fn (%x: Tensor[(" + x + "), float32], %w: Tensor[(" + std::to_string(panels) + ", " + std::to_string(k) +
         ", 32), float32], Primitive=1) { %0 = nn.dense_packed(%x, %w, units=" + std::to_string(units) + "); " +
         (tail.empty() ? "%0" : tail) + " }";
}

TEST(NnDensePackedCompute, PanelGemmOnOddSizes) {
  std::string source = expect_compiled_matches_interpreter(packed_fn("197, 40", 3, 40, 70), product_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_panels_f32("), std::string::npos) << source;
  expect_compiled_matches_interpreter(packed_fn("9, 1", 2, 1, 64), product_tolerance());           // k = 1
  expect_compiled_matches_interpreter(packed_fn("1, 50", 1, 50, 17), product_tolerance());         // one row
  expect_compiled_matches_interpreter(packed_fn("2, 3, 13, 24", 2, 24, 40), product_tolerance());  // batch dims
  expect_compiled_matches_interpreter(packed_fn("24", 1, 24, 32), product_tolerance());            // a vector
  expect_compiled_matches_interpreter(packed_fn("600, 16", 1, 16, 32), product_tolerance());       // row tiles of 300
}

// A whose rows do not fit in L2 (here 64 KB) is computed in bands of rows, each over all the
// columns; the last band is shorter than the others and its call is told so.
TEST(NnDensePackedCompute, RowBandsWhenATooLargeForL2) {
  CompareOptions o = product_tolerance();
  o.target.l2_bytes = 64 << 10;
  // 197 x 200 floats: 154 KB of A, three bands of whole row tiles (AVX-512's 12 rows: 72, 72 and
  // 53; AVX2's 6: 66, 66 and 65); with a bias epilogue.
  const std::string banded = "(kiln_min_i64(" + std::string(host_vector_lanes() >= 16 ? "72" : "66") + ", (197 - ";
  std::string source = expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(197, 200), float32], %w: Tensor[(3, 200, 32), float32], %b: Tensor[(70), float32], "
      "Primitive=1) { %0 = nn.dense_packed(%x, %w, units=70); add(%0, %b) }",
      o);
  EXPECT_NE(source.find("kiln_sgemm_panels_f32" + banded), std::string::npos) << source;
  // Without an epilogue the output is a copy of the banded core; batch dimensions band per batch.
  expect_compiled_matches_interpreter(packed_fn("197, 200", 3, 200, 70), o);
  expect_compiled_matches_interpreter(packed_fn("2, 90, 300", 2, 300, 64), o);
  // A computed weight, transposed per k-block inside the kernel, bands the same way.
  source = expect_compiled_matches_interpreter(
      "fn (%x: Tensor[(197, 200), float32], %w: Tensor[(70, 200), float32], Primitive=1) { nn.dense(%x, %w) }", o);
  EXPECT_NE(source.find("kiln_sgemm_panels_nt_f32" + banded), std::string::npos) << source;
  // With the machine's own L2 the same product is one call of all 197 rows.
  source = expect_compiled_matches_interpreter(packed_fn("197, 200", 3, 200, 70), product_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_panels_f32(197, "), std::string::npos) << source;
}

TEST(NnDensePackedCompute, FusedEpilogue) {
  // bias + erf-GELU + residual computed block by block after the product.
  const std::string fn =
      "fn (%x: Tensor[(37, 48), float32], %w: Tensor[(3, 48, 32), float32], %b: Tensor[(96), "
      "float32], %r: Tensor[(37, 96), float32], Primitive=1) { %0 = nn.dense_packed(%x, %w, "
      "units=96); %1 = add(%0, %b); %2 = multiply(%1, 0.707107f); %3 = erf(%2); %4 = add(%3, 1f); "
      "%5 = multiply(%1, %4); %6 = multiply(%5, 0.5f); add(%6, %r) }";
  std::string source = expect_compiled_matches_interpreter(fn, product_tolerance());
  EXPECT_NE(source.find("kiln_sgemm_panels_f32("), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_erff("), std::string::npos) << source;
}

}  // namespace
}  // namespace kiln::testing
