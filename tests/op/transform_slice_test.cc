// strided_slice and take: type relations (with unknown dims), errors, and the reference
// kernels against numpy (slicing follows numpy's clamping and negative-stride rules).
#include <limits>

#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using Ints = std::vector<int64_t>;

Attrs slice_attrs(Ints begin, Ints end, AttrValue strides = {}, AttrValue axes = {}, std::string mode = "end") {
  return {{"begin", begin}, {"end", end}, {"strides", strides}, {"axes", axes}, {"slice_mode", mode}};
}

std::string slice_type(Shape in, const Attrs& attrs) { return type_str(infer_op("strided_slice", {f32(in)}, attrs)); }

TEST(TransformStridedSlice, TypeRelation) {
  EXPECT_EQ(slice_type({10}, slice_attrs({2}, {8}, Ints{2})), "Tensor[(3), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({-3}, {kMax})), "Tensor[(3), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({8}, {2}, Ints{-2})), "Tensor[(3), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({-1}, {kMin}, Ints{-1})), "Tensor[(10), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({-100}, {100})), "Tensor[(10), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({7}, {3})), "Tensor[(0), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({0}, {10}, Ints{kMax})), "Tensor[(1), float32]");
  EXPECT_EQ(slice_type({10}, slice_attrs({9}, {kMin}, Ints{kMin})), "Tensor[(1), float32]");
  // Dims past the end of 'begin' are kept whole; missing ends reach the end.
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({1, 2}, {3})), "Tensor[(2, 3, 6), float32]");
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({1, 4}, {3}, Ints{1, -1})), "Tensor[(2, 5, 6), float32]");
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({1}, {4}, {}, Ints{-2})), "Tensor[(4, 3, 6), float32]");
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({0, 1}, {2, 4}, {}, Ints{2, 0})), "Tensor[(3, 5, 2), float32]");
}

TEST(TransformStridedSlice, SizeMode) {
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({1, 0}, {2, -1}, {}, {}, "size")), "Tensor[(2, 5, 6), float32]");
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({3, 2}, {5, 2}, Ints{2, 2}, {}, "size")), "Tensor[(1, 2, 6), float32]");
  EXPECT_EQ(slice_type({4, 5, 6}, slice_attrs({-2}, {1}, {}, Ints{2}, "size")), "Tensor[(4, 5, 1), float32]");
}

TEST(TransformStridedSlice, UnknownDims) {
  EXPECT_EQ(slice_type({-1, 5}, slice_attrs({0, 1}, {2, 3})), "Tensor[(?, 2), float32]");
  EXPECT_EQ(slice_type({-1, 5}, slice_attrs({1}, {3}, {}, Ints{1})), "Tensor[(?, 2), float32]");
}

TEST(TransformStridedSlice, Errors) {
  auto error = [](Shape in, const Attrs& attrs) { return infer_op_error("strided_slice", {f32(in)}, attrs); };
  expect_mentions(error({4, 5}, slice_attrs({0, 0}, {2, 2}, Ints{1, 0})),
                  {"op 'strided_slice'", "stride 1 of 'strides' is 0", "[1, 0]"});
  expect_mentions(error({4, 5}, slice_attrs({0, 0, 0}, {1, 1, 1})),
                  {"op 'strided_slice'", "more entries than argument 'data' has dims", "at most 2, found 3"});
  expect_mentions(error({4, 5}, slice_attrs({0}, {1, 2})), {"op 'strided_slice'", "'end' has more entries", "[1, 2]"});
  expect_mentions(error({4, 5}, slice_attrs({0}, {1}, Ints{1, 1})), {"op 'strided_slice'", "'strides'"});
  expect_mentions(error({4, 5}, slice_attrs({0}, {1}, {}, Ints{0, 1})),
                  {"op 'strided_slice'", "'axes' and 'begin'", "[0, 1]"});
  expect_mentions(error({4, 5}, slice_attrs({0}, {1}, {}, Ints{2})),
                  {"op 'strided_slice'", "axis 2 out of range", "rank 2", "[-2, 2)"});
  expect_mentions(error({4, 5}, slice_attrs({0, 0}, {1, 1}, {}, Ints{1, -1})),
                  {"op 'strided_slice'", "appears twice", "[1, -1]"});
  expect_mentions(error({4, 5}, slice_attrs({0}, {1}, {}, {}, "begin")),
                  {"op 'strided_slice'", "'slice_mode'", "found \"begin\""});
  expect_mentions(error({4, 5}, slice_attrs({0}, {-2}, {}, {}, "size")), {"op 'strided_slice'", "size 0 of 'end'"});
  expect_mentions(infer_op_error("strided_slice", {f32({4})}, {{"begin", Ints{0}}}),
                  {"op 'strided_slice'", "missing required attribute 'end'"});
}

TEST(TransformStridedSlice, KernelAgainstNumpy) {
  struct Case {
    Attrs attrs;
    std::string numpy_index;  // the same slice written in numpy
  };
  std::vector<Case> cases = {
      {slice_attrs({1, 0, 0}, {3, 5, 6}), "[1:3, 0:5, 0:6]"},
      {slice_attrs({0, 1, 1}, {4, 5, 6}, Ints{2, 2, 3}), "[0:4:2, 1:5:2, 1:6:3]"},
      {slice_attrs({-1, -1, -1}, {kMin, kMin, kMin}, Ints{-1, -1, -1}), "[::-1, ::-1, ::-1]"},
      {slice_attrs({3, 4, 5}, {0, 0, 0}, Ints{-2, -3, -2}), "[3:0:-2, 4:0:-3, 5:0:-2]"},
      {slice_attrs({-3, -100}, {kMax, 100}), "[-3:, -100:100]"},
      {slice_attrs({2}, {-1}, Ints{-1}, Ints{2}), "[:, :, 2:-1:-1]"},
      {slice_attrs({1, -2}, {2, 10}, {}, Ints{2, 0}), "[-2:10, :, 1:2]"},
      {slice_attrs({1}, {3}, Ints{2}, Ints{-1}), "[..., 1:3:2]"},
      {slice_attrs({1, 2}, {2, -1}, {}, Ints{0, 2}, "size"), "[1:3, :, 2:]"},
      {slice_attrs({-1}, {100}, {}, {}, "size"), "[3:]"},
      {slice_attrs({5, 0}, {6, 5}), "[5:6, 0:5]"},
  };
  std::string code = "x = " + numpy_iota({4, 5, 6}, 100) + "\nr = []\n";
  for (const Case& c : cases) code += "r.append(x" + c.numpy_index + ")\n";
  auto expected = numpy_eval(code);
  ASSERT_EQ(expected.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    for (DType dtype : {DType::kFloat32, DType::kInt8, DType::kFloat16, DType::kInt64}) {
      SCOPED_TRACE(cases[i].numpy_index + " " + std::string(dtype_name(dtype)));
      auto out = run_op("strided_slice", {iota({4, 5, 6}, dtype, 100)}, cases[i].attrs);
      EXPECT_EQ(out[0].dtype(), dtype);
      expect_same(out[0], expected[i]);
    }
  }
}

TEST(TransformStridedSlice, KernelHandWorked) {
  auto out =
      run_op("strided_slice", {tensor({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}, slice_attrs({1, 3}, {kMin, 0}, Ints{-1, -2}));
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  expect_close(out[0], {7, 5, 3, 1});
}

Attrs take_attrs(AttrValue axis, std::string mode = "clip") { return {{"axis", axis}, {"mode", mode}}; }

TEST(TransformTake, TypeRelation) {
  auto idx = [](Shape s) { return tensor_type(std::move(s), DType::kInt64); };
  EXPECT_EQ(type_str(infer_op("take", {f32({3, 4}), idx({2, 5})})), "Tensor[(2, 5), float32]");
  EXPECT_EQ(type_str(infer_op("take", {f32({3, 4, 5}), idx({2})}, take_attrs(1))), "Tensor[(3, 2, 5), float32]");
  EXPECT_EQ(type_str(infer_op("take", {f32({3, 4, 5}), idx({2, 2})}, take_attrs(-1))), "Tensor[(3, 4, 2, 2), float32]");
  EXPECT_EQ(type_str(infer_op("take", {f32({3, 4}), idx({})}, take_attrs(0))), "Tensor[(4), float32]");
  EXPECT_EQ(type_str(infer_op("take", {f32({-1, 4}), tensor_type({-1}, DType::kInt32)}, take_attrs(1))),
            "Tensor[(?, ?), float32]");
  EXPECT_EQ(type_str(infer_op("take", {tensor_type({3}, DType::kUInt8), idx({2})}, take_attrs(0, "wrap"))),
            "Tensor[(2), uint8]");
}

TEST(TransformTake, Errors) {
  std::string e = infer_op_error("take", {f32({3, 4}), f32({2})});
  expect_mentions(e, {"op 'take'", "argument 'indices'", "(2)", "expected int32 or int64, found float32"});
  e = infer_op_error("take", {f32({3, 4}), tensor_type({2}, DType::kInt32)}, take_attrs(2));
  expect_mentions(e, {"op 'take'", "axis out of range", "found 2"});
  e = infer_op_error("take", {f32({3, 4}), tensor_type({2}, DType::kInt32)}, take_attrs(0, "raise"));
  expect_mentions(e, {"op 'take'", "'mode'", "found \"raise\""});
  e = infer_op_error("take", {f32({3, 4})});
  expect_mentions(e, {"op 'take'", "wrong number of arguments"});
}

TEST(TransformTake, KernelModesHandWorked) {
  NDArray data = tensor({3}, {10, 20, 30});
  NDArray indices = tensor({4}, {-1, 5, -8, 4}, DType::kInt64);
  // clip: a negative index counts from the end once, then everything is clamped to [0, 2].
  expect_close(run_op("take", {data, indices}, take_attrs(0, "clip"))[0], {30, 30, 10, 30});
  expect_close(run_op("take", {data, indices}, take_attrs(0, "wrap"))[0], {30, 30, 20, 20});
  NDArray in_range = tensor({4}, {-3, -1, 0, 2}, DType::kInt32);
  expect_close(run_op("take", {data, in_range}, take_attrs(0, "fast"))[0], {10, 30, 10, 30});
}

TEST(TransformTake, FastModeRejectsOutOfRangeIndex) {
  NDArray data = tensor({3}, {10, 20, 30});
  try {
    run_op("take", {data, tensor({3}, {0, 3, 1}, DType::kInt64)}, take_attrs(0, "fast"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    expect_mentions(e.what(), {"op 'take'", "index 1 of argument 'indices'", "expected in [-3, 3), found 3"});
  }
  try {
    run_op("take", {tensor({0, 2}, {}), tensor({1}, {0}, DType::kInt64)}, take_attrs(0));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    expect_mentions(e.what(), {"op 'take'", "extent 0"});
  }
}

TEST(TransformTake, KernelAgainstNumpy) {
  // numpy's take counts negative indices from the end, like ONNX Gather and our "fast" mode.
  const std::vector<int64_t> axes = {0, 1, 2, -2};
  std::string code = "x = " + numpy_iota({4, 4, 5}) + "\ny = " + numpy_iota({3, 4, 5}) +
                     "\nidx = np.array([[2, -1, 0], [-4, 3, 1]])\nr = []\n";
  for (int64_t axis : axes) code += "r.append(np.take(x, idx, axis=" + std::to_string(axis) + "))\n";
  code += "r.append(np.take(y, [7, -9, 0, 59, 60], mode='wrap'))\n";
  // Our clip counts a negative index from the end once before clamping; numpy's does not.
  code += "i = np.array([7, -9, 0, 59, 60]); i = np.where(i < 0, i + 4, i)\n";
  code += "r.append(np.take(y, np.clip(i, 0, 3), axis=1))\n";
  auto expected = numpy_eval(code);
  ASSERT_EQ(expected.size(), axes.size() + 2);

  std::vector<double> index_values = {2, -1, 0, -4, 3, 1};
  for (DType index_dtype : {DType::kInt32, DType::kInt64}) {
    for (size_t i = 0; i < axes.size(); ++i) {
      NDArray indices = tensor({2, 3}, index_values, index_dtype);
      auto out = run_op("take", {iota({4, 4, 5}, DType::kFloat64), indices}, take_attrs(axes[i], "fast"));
      expect_same(out[0], expected[i]);
    }
  }
  NDArray indices = tensor({5}, {7, -9, 0, 59, 60}, DType::kInt64);
  auto flat = run_op("take", {iota({3, 4, 5}, DType::kInt16), indices}, take_attrs({}, "wrap"));
  EXPECT_EQ(flat[0].dtype(), DType::kInt16);
  expect_same(flat[0], expected[axes.size()]);
  auto clipped = run_op("take", {iota({3, 4, 5}, DType::kInt16), indices}, take_attrs(1, "clip"));
  expect_same(clipped[0], expected[axes.size() + 1]);
}

TEST(TransformStridedSlice, FusionPatternIsInjective) {
  EXPECT_EQ(OpRegistry::global().get("strided_slice").pattern, OpPattern::kInjective);
  EXPECT_EQ(OpRegistry::global().get("take").pattern, OpPattern::kInjective);
}

}  // namespace
}  // namespace kiln::testing
