#include "kiln/attrs/pad.h"
#include "op/numpy_ref.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using List = AttrValue::List;

// pad_width as Relay writes it: [[before, after], ...].
AttrValue widths(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  List list;
  for (auto [before, after] : pairs) list.push_back(AttrValue(std::vector<int64_t>{before, after}));
  return AttrValue(list);
}

Type scalar_f32() { return f32({}); }

// ---- type relation ----

TEST(NnPadType, Shapes) {
  EXPECT_EQ(type_str(infer_op("nn.pad", {f32({1, 3, 4, 4}), scalar_f32()},
                              {{"pad_width", widths({{0, 0}, {0, 0}, {1, 1}, {2, 2}})}})),
            "Tensor[(1, 3, 6, 8), float32]");
  EXPECT_EQ(type_str(infer_op("nn.pad", {f32({-1, 4}), scalar_f32()},
                              {{"pad_width", widths({{1, 1}, {0, 3}})}, {"pad_mode", "reflect"}})),
            "Tensor[(?, 7), float32]");
  // Negative amounts crop.
  EXPECT_EQ(type_str(infer_op("nn.pad", {f32({5}), scalar_f32()}, {{"pad_width", widths({{-1, 2}})}})),
            "Tensor[(6), float32]");
  EXPECT_EQ(
      type_str(infer_op("nn.pad", {tensor_type({2}, DType::kInt8), scalar_f32()}, {{"pad_width", widths({{1, 0}})}})),
      "Tensor[(3), int8]");
}

TEST(NnPadType, Errors) {
  std::string e = infer_op_error("nn.pad", {f32({2, 3}), scalar_f32()}, {{"pad_width", widths({{1, 1}})}});
  EXPECT_NE(e.find("'pad_width'"), std::string::npos) << e;
  EXPECT_NE(e.find("'data' (2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 2 pairs"), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({2, 3}), scalar_f32()}, {{"pad_width", std::vector<int64_t>{1, 1}}});
  EXPECT_NE(e.find("must be a list of [before, after] pairs of ints"), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({2, 3}), f32({1})}, {{"pad_width", widths({{1, 1}, {0, 0}})}});
  EXPECT_NE(e.find("argument 'pad_value'"), std::string::npos) << e;
  EXPECT_NE(e.find("found (1)"), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({2, 3}), scalar_f32()},
                     {{"pad_width", widths({{1, 1}, {0, 0}})}, {"pad_mode", "symmetric"}});
  EXPECT_NE(e.find("'pad_mode'"), std::string::npos) << e;
  EXPECT_NE(e.find("\"wrap\""), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({0, 3}), scalar_f32()},
                     {{"pad_width", widths({{0, 1}, {0, 0}})}, {"pad_mode", "wrap"}});
  EXPECT_NE(e.find("empty axis 0"), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({2, 3}), scalar_f32()}, {{"pad_width", widths({{0, 0}, {-2, -2}})}});
  EXPECT_NE(e.find("crops more than axis 1 of 'data' (2, 3)"), std::string::npos) << e;
  e = infer_op_error("nn.pad", {f32({0, 3}), scalar_f32()},
                     {{"pad_width", widths({{1, 0}, {0, 0}})}, {"pad_mode", "edge"}});
  EXPECT_NE(e.find("empty axis 0"), std::string::npos) << e;
  EXPECT_NE(infer_op_error("nn.pad", {f32({2, 3}), scalar_f32()}).find("missing required attribute 'pad_width'"),
            std::string::npos);
}

// ---- kernel, hand-worked ----

TEST(NnPadKernel, Constant) {
  auto out = run_op("nn.pad", {tensor({2, 2}, {1, 2, 3, 4}), NDArray::scalar(DType::kFloat32, 9)},
                    {{"pad_width", widths({{1, 0}, {0, 1}})}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 3}));
  expect_close(out[0], {9, 9, 9, 1, 2, 9, 3, 4, 9});
}

TEST(NnPadKernel, EdgeReflectAndCrop) {
  NDArray x = tensor({3}, {1, 2, 3});
  NDArray zero = NDArray::scalar(DType::kFloat32, 0);
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", widths({{2, 1}})}, {"pad_mode", "edge"}})[0],
               {1, 1, 1, 2, 3, 3});
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", widths({{2, 2}})}, {"pad_mode", "reflect"}})[0],
               {3, 2, 1, 2, 3, 2, 1});
  expect_close(run_op("nn.pad", {tensor({4}, {1, 2, 3, 4}), zero}, {{"pad_width", widths({{-1, 1}})}})[0],
               {2, 3, 4, 0});
  // A single element reflects onto itself.
  expect_close(
      run_op("nn.pad", {tensor({1}, {5}), zero}, {{"pad_width", widths({{2, 1}})}, {"pad_mode", "reflect"}})[0],
      {5, 5, 5, 5});
}

// wrap (ONNX Pad 19): the axis continues with its other end, periodically.
TEST(NnPadKernel, Wrap) {
  NDArray x = tensor({3}, {1, 2, 3});
  NDArray zero = NDArray::scalar(DType::kFloat32, 0);
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", widths({{2, 1}})}, {"pad_mode", "wrap"}})[0],
               {2, 3, 1, 2, 3, 1});
  // Wider than the axis: the period repeats.
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", widths({{4, 5}})}, {"pad_mode", "wrap"}})[0],
               {3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2});
  // Two axes: rows wrap, then columns.
  auto out = run_op("nn.pad", {tensor({2, 2}, {1, 2, 3, 4}), zero},
                    {{"pad_width", widths({{1, 0}, {0, 1}})}, {"pad_mode", "wrap"}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 3}));
  expect_close(out[0], {3, 4, 3, 1, 2, 1, 3, 4, 3});
}

TEST(NnPadKernel, WrapMatchesNumpy) {
  NDArray x = sample_tensor({2, 3, 4}, 53);
  auto out = run_op("nn.pad", {x, NDArray::scalar(DType::kFloat32, 0)},
                    {{"pad_width", widths({{1, 2}, {0, 7}, {3, 1}})}, {"pad_mode", "wrap"}});
  expect_close(out[0], run_python("x = " + np_array(x) + "\n" +
                                  print_values("np.pad(x, ((1, 2), (0, 7), (3, 1)), mode='wrap')")));
}

TEST(NnPadAttrs, TypedRoundTrip) {
  PadAttrs a;
  a.pad_width = PadAttrs::width_of({{1, 2}, {0, -1}});
  a.pad_mode = "wrap";
  PadAttrs b = attrs_from<PadAttrs>(attrs_to(a), "nn.pad");
  EXPECT_EQ(b.pairs(), (std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {0, -1}}));
  EXPECT_EQ(b.mode(), PadMode::kWrap);
  EXPECT_EQ(attrs_to(a).to_string(), "pad_width=[[1, 2], [0, -1]], pad_mode=\"wrap\"");
}

TEST(NnPadKernel, OtherDtypesAndPadValueConversion) {
  auto out = run_op("nn.pad", {tensor({2}, {-7, 8}, DType::kInt32), NDArray::scalar(DType::kFloat64, 3)},
                    {{"pad_width", widths({{1, 1}})}});
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].to_ints(), (std::vector<int64_t>{3, -7, 8, 3}));
  out = run_op("nn.pad", {tensor({1}, {1}, DType::kBool), NDArray::scalar(DType::kBool, 0)},
               {{"pad_width", widths({{0, 2}})}});
  EXPECT_EQ(out[0].to_ints(), (std::vector<int64_t>{1, 0, 0}));
  out = run_op("nn.pad", {tensor({2}, {0.5, -1.5}, DType::kFloat16), NDArray::scalar(DType::kFloat32, 2)},
               {{"pad_width", widths({{1, 0}})}, {"pad_mode", "constant"}});
  expect_close(out[0], {2, 0.5, -1.5}, 0, 0);
}

// ---- comparison with numpy ----

TEST(NnPadKernel, MatchesNumpyAllModes) {
  NDArray x = sample_tensor({2, 3, 4}, 51);
  auto pairs = widths({{1, 2}, {0, 3}, {2, 1}});
  std::string np_pairs = "((1, 2), (0, 3), (2, 1))";
  std::string script = "x = " + np_array(x) + "\n" + print_values("np.pad(x, " + np_pairs + ", constant_values=-2.5)") +
                       "\n" + print_values("np.pad(x, " + np_pairs + ", mode='edge')") + "\n" +
                       print_values("np.pad(x, " + np_pairs + ", mode='reflect')") + "\n";
  std::vector<std::vector<double>> expected = run_python_lines(script);
  ASSERT_EQ(expected.size(), 3u);
  expect_close(run_op("nn.pad", {x, NDArray::scalar(DType::kFloat32, -2.5)}, {{"pad_width", pairs}})[0], expected[0]);
  NDArray zero = NDArray::scalar(DType::kFloat32, 0);
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", pairs}, {"pad_mode", "edge"}})[0], expected[1]);
  expect_close(run_op("nn.pad", {x, zero}, {{"pad_width", pairs}, {"pad_mode", "reflect"}})[0], expected[2]);
}

TEST(NnPadKernel, ReflectBeyondTheExtentMatchesNumpy) {
  NDArray x = sample_tensor({2, 3}, 52);
  auto out = run_op("nn.pad", {x, NDArray::scalar(DType::kFloat32, 0)},
                    {{"pad_width", widths({{3, 4}, {5, 6}})}, {"pad_mode", "reflect"}});
  EXPECT_EQ(out[0].shape(), (Shape{9, 14}));
  expect_close(out[0],
               run_python("x = " + np_array(x) + "\n" + print_values("np.pad(x, ((3, 4), (5, 6)), mode='reflect')")));
}

}  // namespace
}  // namespace kiln::testing
