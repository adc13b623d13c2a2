// Typed attributes of the nn ops declared in kiln/attrs/nn.h after the conv/pool family: dense,
// matmul, batch_matmul, the norms, lrn, bias_add, nll_loss, dropout. Also the saturating cast
// the products' out_dtype shares with qnn (src/op/compute_util.h), compiled against the
// reference kernels.
#include "kiln/attrs/nn.h"
#include "kiln/ir/expr.h"
#include "op/attrs_test_util.h"
#include "op/compute_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

TEST(NnAttrs, SchemasAreTheDeclarations) {
  expect_schema_of<DenseAttrs>("nn.dense");
  expect_schema_of<MatmulAttrs>("nn.matmul");
  expect_schema_of<BatchMatmulAttrs>("nn.batch_matmul");
  expect_schema_of<BatchNormAttrs>("nn.batch_norm");
  expect_schema_of<LayerNormAttrs>("nn.layer_norm");
  expect_schema_of<InstanceNormAttrs>("nn.instance_norm");
  expect_schema_of<LrnAttrs>("nn.lrn");
  expect_schema_of<BiasAddAttrs>("nn.bias_add");
  expect_schema_of<NllLossAttrs>("nn.nll_loss");
  expect_schema_of<DropoutAttrs>("nn.dropout");
}

TEST(NnAttrs, DefaultsAreRelays) {
  // The values the untyped schemas had: IR text and graph JSON written before still read the same.
  const OpRegistry& ops = OpRegistry::global();
  EXPECT_EQ(ops.get("nn.dense").normalize({}).to_string(), "units=None, out_dtype=\"\"");
  EXPECT_EQ(ops.get("nn.matmul").normalize({}).to_string(),
            "units=None, out_dtype=\"\", transpose_a=False, transpose_b=False");
  EXPECT_EQ(ops.get("nn.batch_matmul").normalize({}).to_string(),
            "out_dtype=\"\", transpose_a=False, transpose_b=True");
  EXPECT_EQ(ops.get("nn.batch_norm").normalize({}).to_string(), "axis=1, epsilon=1e-05f, center=True, scale=True");
  EXPECT_EQ(ops.get("nn.layer_norm").normalize({}).get("axis"), AttrValue(int64_t{-1}));
  EXPECT_EQ(ops.get("nn.lrn").normalize({}).to_string(), "size=5, axis=1, bias=2f, alpha=1e-05f, beta=0.75f");
  EXPECT_EQ(ops.get("nn.nll_loss").normalize({}).to_string(), "reduction=\"mean\", ignore_index=-100");
  EXPECT_EQ(attrs_from<DropoutAttrs>({}).rate, 0.5);
  EXPECT_EQ(attrs_from<BiasAddAttrs>({}).axis, 1);
  EXPECT_FALSE(attrs_from<DenseAttrs>({}).units.has_value());
}

TEST(NnAttrs, RoundTrip) {
  MatmulAttrs m;
  m.units = 7;
  m.out_dtype = "float64";
  m.transpose_b = true;
  expect_round_trip(m, "nn.matmul");
  EXPECT_EQ(attrs_from<MatmulAttrs>(attrs_to(m)).units, std::optional<int64_t>(7));
  LayerNormAttrs ln;
  ln.epsilon = 1e-3;
  ln.center = false;
  expect_round_trip(ln, "nn.layer_norm");
  expect_round_trip(LrnAttrs{.size = 3, .axis = 2, .bias = 1, .alpha = 1e-4, .beta = 0.5}, "nn.lrn");
  expect_round_trip(NllLossAttrs{.reduction = "sum", .ignore_index = 3}, "nn.nll_loss");
  expect_round_trip(BatchMatmulAttrs{.out_dtype = "int32", .transpose_a = true, .transpose_b = false},
                    "nn.batch_matmul");
}

TEST(NnAttrs, BadValuesNameOpAndAttribute) {
  expect_names_op_and_attr(infer_op_error("nn.lrn", {f32({1, 4, 3})}, {{"size", int64_t{0}}}), "nn.lrn", "size");
  expect_names_op_and_attr(
      infer_op_error("nn.batch_norm", {f32({1, 3}), f32({3}), f32({3}), f32({3}), f32({3})}, {{"epsilon", -1.0}}),
      "nn.batch_norm", "epsilon");
  expect_names_op_and_attr(
      infer_op_error("nn.instance_norm", {f32({1, 3, 2}), f32({3}), f32({3})}, {{"epsilon", -1e-3}}),
      "nn.instance_norm", "epsilon");
  expect_names_op_and_attr(infer_op_error("nn.dropout", {f32({2})}, {{"rate", 1.5}}), "nn.dropout", "rate");
  std::string e = infer_op_error("nn.nll_loss", {f32({2, 3}), tensor_type({2}, DType::kInt64)}, {{"reduction", "avg"}});
  expect_names_op_and_attr(e, "nn.nll_loss", "reduction");
  EXPECT_NE(e.find("\"avg\""), std::string::npos) << e;
  e = infer_op_error("nn.dense", {f32({2, 3}), f32({4, 3})}, {{"out_dtype", "float"}});
  expect_names_op_and_attr(e, "nn.dense", "out_dtype");
  EXPECT_NE(e.find("not a dtype"), std::string::npos) << e;
  expect_names_op_and_attr(infer_op_error("nn.matmul", {f32({2, 3}), f32({3, 4})}, {{"transpose_a", "yes"}}),
                           "nn.matmul", "transpose_a");
  expect_names_op_and_attr(infer_op_error("nn.bias_add", {f32({2, 3}), f32({3})}, {{"axes", int64_t{1}}}),
                           "nn.bias_add", "axes");
  // The reference kernels decode through the same declaration.
  NDArray x = tensor({1, 2}, {1, 2});
  NDArray y = tensor({1, 2}, {0, 0});
  e = error_of([&] {
    KernelRegistry::global().get("nn.lrn")({{"size", int64_t{-2}}}, std::span<const NDArray>(&x, 1),
                                           std::span<NDArray>(&y, 1));
  });
  expect_names_op_and_attr(e, "nn.lrn", "size");
}

TEST(NnAttrs, TypedRelationsAndKernels) {
  EXPECT_EQ(type_str(infer_op("nn.matmul", {f32({3, 2}), f32({4, 3})}, attrs_to(MatmulAttrs{{}, true, true}))),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(type_str(infer_op("nn.dense", {f32({2, 3}), f32({4, 3})}, {{"out_dtype", "float64"}})),
            "Tensor[(2, 4), float64]");
  std::vector<NDArray> out =
      run_op("nn.batch_matmul", {tensor({1, 1, 2}, {1, 2}), tensor({1, 2, 1}, {3, 4})}, {{"transpose_b", false}});
  expect_close(out[0], {11});
  out = run_op("nn.bias_add", {tensor({2, 2}, {1, 2, 3, 4}), tensor({2}, {10, 20})}, attrs_to(BiasAddAttrs{.axis = 0}));
  expect_close(out[0], {11, 12, 23, 24});
}

TEST(NnAttrs, CallOpWithTheStruct) {
  Var x = make_var("x", f32({2, 3})), w = make_var("w", f32({4, 3}));
  DenseAttrs a;
  a.units = 4;
  Expr call = call_op("nn.dense", {x, w}, a);
  EXPECT_EQ(as<CallNode>(call)->attrs, (Attrs{{"units", int64_t{4}}, {"out_dtype", ""}}));
}

// Float products stored as integers round to nearest, saturate and map NaN to 0 in generated
// code as in the reference kernels (saturating_cast).
TEST(NnAttrs, SaturatingOutDtypeCompiles) {
  CompareOptions o;
  o.low = -40;
  o.high = 40;
  o.atol = o.rtol = 0;
  for (const char* out : {"int8", "uint8", "int16"}) {
    SCOPED_TRACE(out);
    expect_compiled_matches_interpreter(
        "fn (%a: Tensor[(3, 5), float64], %b: Tensor[(4, 5), float64], Primitive=1) { nn.dense(%a, %b, out_dtype=\"" +
            std::string(out) + "\") }",
        o);
  }
}

}  // namespace
}  // namespace kiln::testing
