// Typed attributes of the qnn, signal, random, vision, image.grid_sample, unreachable and device
// annotation ops (kiln/attrs/{qnn,signal,random,vision,image,control}.h): schemas derived
// from the declarations, round trips, defaults, required attributes, and bad values rejected by
// the relations and the reference kernels with one-line errors naming op and attribute.
#include "kiln/attrs/control.h"
#include "kiln/attrs/image.h"
#include "kiln/attrs/qnn.h"
#include "kiln/attrs/random.h"
#include "kiln/attrs/signal.h"
#include "kiln/attrs/vision.h"
#include "op/attrs_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

Type of(Shape shape, DType dtype) { return tensor_type(std::move(shape), dtype); }

TEST(FamilyAttrs, SchemasAreTheDeclarations) {
  expect_schema_of<QuantizeAttrs>("qnn.quantize");
  expect_schema_of<DequantizeAttrs>("qnn.dequantize");
  expect_schema_of<RequantizeAttrs>("qnn.requantize");
  expect_schema_of<QnnMatmulAttrs>("qnn.matmul");
  expect_schema_of<DftAttrs>("signal.dft");
  expect_schema_of<StftAttrs>("signal.stft");
  for (const char* w : {"signal.hann_window", "signal.hamming_window", "signal.blackman_window"})
    expect_schema_of<CosineWindowAttrs>(w);
  expect_schema_of<MelWeightMatrixAttrs>("signal.mel_weight_matrix");
  expect_schema_of<RandomUniformAttrs>("random.uniform");
  expect_schema_of<RandomNormalAttrs>("random.normal");
  expect_schema_of<BernoulliAttrs>("random.bernoulli");
  expect_schema_of<MultinomialAttrs>("random.multinomial");
  expect_schema_of<AllClassNmsAttrs>("vision.all_class_non_max_suppression");
  expect_schema_of<RoiAlignAttrs>("vision.roi_align");
  expect_schema_of<GridSampleAttrs>("image.grid_sample");
  expect_schema_of<UnreachableAttrs>("unreachable");
  expect_schema_of<OnDeviceAttrs>("on_device");
  expect_schema_of<DeviceCopyAttrs>("device_copy");
}

TEST(FamilyAttrs, DefaultsAndRequired) {
  const OpRegistry& ops = OpRegistry::global();
  EXPECT_EQ(ops.get("qnn.requantize").normalize({}).to_string(), "axis=-1, rounding=\"UPWARD\", out_dtype=\"int8\"");
  EXPECT_EQ(ops.get("qnn.matmul").normalize({}).to_string(), "out_dtype=\"int32\"");
  EXPECT_EQ(ops.get("signal.dft").normalize({}).to_string(), "axis=1, inverse=False, onesided=False, dft_length=None");
  EXPECT_EQ(ops.get("random.multinomial").normalize({}).to_string(), "sample_size=1, dtype=\"int32\", seed=None");
  EXPECT_EQ(ops.get("on_device").normalize({}).to_string(),
            "virtual_device=\"\", constrain_result=False, constrain_body=True");
  EXPECT_EQ(ops.get("image.grid_sample").normalize({}).to_string(),
            "method=\"bilinear\", layout=\"NCHW\", padding_mode=\"zeros\", align_corners=False");
  // Required attributes: in the schema without a default, and rejected when absent by both the
  // generic normalisation and the typed decoder, with the same message.
  const std::vector<std::pair<const char*, const char*>> required = {{"signal.stft", "frame_step"},
                                                                     {"signal.hann_window", "window_length"},
                                                                     {"signal.mel_weight_matrix", "num_mel_bins"},
                                                                     {"random.uniform", "shape"},
                                                                     {"vision.roi_align", "pooled_size"},
                                                                     {"unreachable", "message"}};
  for (const auto& [op, attr] : required) {
    SCOPED_TRACE(op);
    std::string e = error_of([&ops, op = op] { ops.get(op).normalize({}); });
    expect_names_op_and_attr(e, op, attr);
    EXPECT_NE(e.find("missing required attribute"), std::string::npos) << e;
  }
  std::string e = error_of([] { attrs_from<StftAttrs>({{"onesided", false}}, "signal.stft"); });
  expect_names_op_and_attr(e, "signal.stft", "frame_step");
  EXPECT_NE(e.find("missing required attribute"), std::string::npos) << e;
  EXPECT_EQ(attrs_from<StftAttrs>({{"frame_step", int64_t{4}}}).frame_step, 4);
}

TEST(FamilyAttrs, RoundTrip) {
  expect_round_trip(RequantizeAttrs{.axis = 1, .rounding = "HALF_TO_EVEN", .out_dtype = "uint8"}, "qnn.requantize");
  expect_round_trip(DequantizeAttrs{.axis = 0, .out_dtype = "float64"}, "qnn.dequantize");
  expect_round_trip(DftAttrs{.axis = 2, .inverse = true, .onesided = false, .dft_length = 16}, "signal.dft");
  expect_round_trip(StftAttrs{.frame_step = 2, .frame_length = std::nullopt, .onesided = false}, "signal.stft");
  expect_round_trip(MelWeightMatrixAttrs{8, 64, 16000, 20.0, 4000.0, "float64"}, "signal.mel_weight_matrix");
  expect_round_trip(RandomNormalAttrs{Ints{2, 3}, 1.0, 0.5, "float64", 42}, "random.normal");
  expect_round_trip(BernoulliAttrs{.dtype = "", .seed = std::nullopt}, "random.bernoulli");
  expect_round_trip(RoiAlignAttrs{Ints{7}, 0.25, 2, "NCHW", "max", true}, "vision.roi_align");
  expect_round_trip(UnreachableAttrs{"branch", Ints{-1, 3}, "int64"}, "unreachable");
  expect_round_trip(DeviceCopyAttrs{"cpu", "cpu"}, "device_copy");
  EXPECT_EQ(attrs_from<RandomNormalAttrs>(attrs_to(RandomNormalAttrs{Ints{1}, 0, 1, "float32", 42})).seed,
            std::optional<int64_t>(42));
  EXPECT_EQ(attrs_from<RoiAlignAttrs>({{"pooled_size", Ints{3}}}).pooled().w, 3);
}

TEST(FamilyAttrs, BadValuesNameOpAndAttribute) {
  const Type u8 = of({2, 3}, DType::kUInt8), scalar = f32({}), zp = of({}, DType::kUInt8);
  struct Case {
    std::string op, attr;
    std::vector<Type> args;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      {"qnn.quantize", "out_dtype", {f32({2}), scalar, zp}, {{"out_dtype", "float32"}}},
      {"qnn.dequantize", "out_dtype", {u8, scalar, zp}, {{"out_dtype", "int8"}}},
      {"qnn.requantize", "rounding", {u8, scalar, zp, scalar, zp}, {{"rounding", "DOWN"}}},
      {"qnn.matmul", "out_dtype", {u8, of({3, 2}, DType::kUInt8), zp, zp, scalar, scalar}, {{"out_dtype", "int64"}}},
      {"signal.dft", "dft_length", {f32({1, 8, 1})}, {{"dft_length", int64_t{0}}}},
      {"signal.stft", "frame_step", {f32({1, 8, 1})}, {{"frame_step", int64_t{0}}, {"frame_length", int64_t{4}}}},
      {"signal.hann_window", "window_length", {}, {{"window_length", int64_t{-1}}}},
      {"signal.blackman_window", "dtype", {}, {{"window_length", int64_t{4}}, {"dtype", "bool"}}},
      {"signal.mel_weight_matrix",
       "lower_edge_hertz",
       {},
       {{"num_mel_bins", int64_t{4}},
        {"dft_length", int64_t{16}},
        {"sample_rate", int64_t{8000}},
        {"lower_edge_hertz", 500.0},
        {"upper_edge_hertz", 100.0}}},
      {"random.uniform", "shape", {}, {{"shape", Ints{2, -3}}}},
      {"random.normal", "dtype", {}, {{"shape", Ints{2}}, {"dtype", "floatish"}}},
      {"random.multinomial", "dtype", {f32({1, 3})}, {{"dtype", "float32"}}},
      {"random.multinomial", "sample_size", {f32({1, 3})}, {{"sample_size", int64_t{0}}}},
      {"vision.roi_align", "mode", {f32({1, 2, 4, 4}), f32({1, 5})}, {{"pooled_size", Ints{2}}, {"mode", "min"}}},
      {"vision.roi_align", "pooled_size", {f32({1, 2, 4, 4}), f32({1, 5})}, {{"pooled_size", Ints{2, 0}}}},
      {"image.grid_sample", "padding_mode", {f32({1, 1, 2, 2}), f32({1, 2, 3, 3})}, {{"padding_mode", "wrap"}}},
      {"unreachable", "shape", {}, {{"message", "no"}, {"shape", Ints{-2}}}},
      {"on_device", "virtual_device", {f32({2})}, {{"virtual_device", int64_t{1}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.attrs.to_string());
    expect_names_op_and_attr(infer_op_error(c.op, c.args, c.attrs), c.op, c.attr);
  }
  // A kernel decodes its attributes through the declaration too.
  NDArray out = NDArray::empty({4}, DType::kFloat32);
  std::string e = error_of([&] {
    KernelRegistry::global().get("signal.hann_window")({{"window_length", int64_t{4}}, {"periodic", "yes"}}, {},
                                                       std::span<NDArray>(&out, 1));
  });
  expect_names_op_and_attr(e, "signal.hann_window", "periodic");
}

TEST(FamilyAttrs, TypedRelationsAndKernels) {
  EXPECT_EQ(type_str(infer_op("signal.mel_weight_matrix", {},
                              attrs_to(MelWeightMatrixAttrs{4, 16, 8000, 0.0, 4000.0, "float64"}))),
            "Tensor[(9, 4), float64]");
  EXPECT_EQ(type_str(infer_op("random.uniform", {}, {{"shape", Ints{2, 3}}, {"dtype", ""}})),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(type_str(infer_op("unreachable", {}, attrs_to(UnreachableAttrs{"x", Ints{-1, 2}, "int8"}))),
            "Tensor[(?, 2), int8]");
  // Equal seeds, equal samples.
  const Attrs seeded = attrs_to(RandomUniformAttrs{Ints{5}, -1.0, 1.0, "float32", 7});
  expect_close(run_op("random.uniform", {}, seeded)[0], run_op("random.uniform", {}, seeded)[0].to_doubles(), 0);
  std::string e = error_of([] {
    run_op("unreachable", {}, attrs_to(UnreachableAttrs{"not here", Ints{1}, "float32"}));
  });
  EXPECT_NE(e.find("not here"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln::testing
