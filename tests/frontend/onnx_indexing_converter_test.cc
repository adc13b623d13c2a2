// Converters of the indexing family end to end (ONNX model -> IR -> interpreter), against
// numpy; data-dependent ops both with run-time inputs ('?' extents) and with inputs known at
// import time (folded to Constants).
#include <gtest/gtest.h>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"

namespace kiln::testing {
namespace {

std::vector<NDArray> run(OnnxModelBuilder& b, const std::vector<NDArray>& inputs) {
  OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  std::vector<Value> args(inputs.begin(), inputs.end());
  return interpret(bind_params(m.module, m.params), "main", args).flatten();
}

void expect_equal(const NDArray& actual, const NDArray& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  EXPECT_EQ(actual.to_doubles(), expected.to_doubles());
}

NDArray i64(Shape shape, const std::vector<double>& v) { return tensor(std::move(shape), v, DType::kInt64); }

TEST(OnnxIndexingConverters, GatherNdMovesCoordinatesFirstAndKeepsBatchDims) {
  OnnxModelBuilder b(13);
  b.input("x", {2, 2, 2}).input("i", {2, 1, 1}, onnx::TensorProto::INT64).output_any("y");
  set_attr(b.node("GatherND", {"x", "i"}, {"y"}), "batch_dims", int64_t{1});
  NDArray x = tensor({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  TempDir dir;
  NDArray expected = numpy_reference(dir, {{"x", x}}, "x = np.load('x.npy')\nout = np.stack([x[0][[1]], x[1][[0]]])");
  expect_equal(run(b, {x, i64({2, 1, 1}, {1, 0})})[0], expected);
}

TEST(OnnxIndexingConverters, ScatterElementsReductionAndScatterNd) {
  OnnxModelBuilder b(16);
  b.input("x", {3, 3}).input("i", {1, 2}, onnx::TensorProto::INT64).input("u", {1, 2}).output_any("y");
  b.input("j", {1, 1}, onnx::TensorProto::INT64).input("v", {1, 3}).output_any("z");
  auto& n = b.node("ScatterElements", {"x", "i", "u"}, {"y"});
  set_attr(n, "axis", int64_t{1});
  set_attr(n, "reduction", std::string("add"));
  set_attr(b.node("ScatterND", {"x", "j", "v"}, {"z"}), "reduction", std::string("mul"));
  NDArray x = tensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto out = run(b, {x, i64({1, 2}, {1, 1}), tensor({1, 2}, {10, 20}), i64({1, 1}, {-1}), tensor({1, 3}, {2, 3, 4})});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 32, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6, 14, 24, 36}));
}

TEST(OnnxIndexingConverters, OneHotWrapsNegativeIndicesAndTakesValuesDtype) {
  OnnxModelBuilder b(11);
  b.input("i", {3}).output_any("y", onnx::TensorProto::INT64);
  b.initializer("depth", NDArray::scalar(DType::kFloat32, 4)).initializer("values", ints({0, 9}));
  set_attr(b.node("OneHot", {"i", "depth", "values"}, {"y"}), "axis", int64_t{0});
  NDArray y = run(b, {tensor({3}, {1, -1, 2})})[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(y.to_ints(), (std::vector<int64_t>{0, 0, 0, 9, 0, 0, 0, 0, 9, 0, 9, 0}));
}

TEST(OnnxIndexingConverters, CompressWithRunTimeAndConstantConditions) {
  NDArray x = tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  {
    OnnxModelBuilder b(11);
    b.input("x", {3, 2}).input("c", {2}, onnx::TensorProto::BOOL).output_any("y");
    set_attr(b.node("Compress", {"x", "c"}, {"y"}), "axis", int64_t{0});
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
    EXPECT_TRUE(contains(print_module(m.module), "argwhere"));
    NDArray y = run(b, {x, tensor({2}, {0, 1}, DType::kBool)})[0];
    EXPECT_EQ(y.shape(), (Shape{1, 2}));
    EXPECT_EQ(y.to_doubles(), (std::vector<double>{3, 4}));
  }
  {
    OnnxModelBuilder b(11);
    b.input("x", {3, 2}).output_any("y").initializer("c", tensor({4}, {1, 0, 0, 1}, DType::kBool));
    b.node("Compress", {"x", "c"}, {"y"});  // no axis: the flattened data
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
    EXPECT_FALSE(contains(print_module(m.module), "argwhere"));
    EXPECT_EQ(run(b, {x})[0].to_doubles(), (std::vector<double>{1, 4}));
  }
}

TEST(OnnxIndexingConverters, NonZeroAndUniqueAtRunTimeAndFolded) {
  NDArray x = tensor({2, 3}, {0, 3, 1, 3, 0, 2});
  TempDir dir;
  NDArray nonzero = numpy_reference(dir, {{"x", x}}, "out = np.array(np.nonzero(np.load('x.npy')))");
  {
    OnnxModelBuilder b(13);
    b.input("x", {2, 3}).output_any("n", onnx::TensorProto::INT64);
    b.output_any("y").output_any("idx", onnx::TensorProto::INT64).output_any("inv", onnx::TensorProto::INT64);
    b.output_any("counts", onnx::TensorProto::INT64);
    b.node("NonZero", {"x"}, {"n"});
    set_attr(b.node("Unique", {"x"}, {"y", "idx", "inv", "counts"}), "sorted", int64_t{0});
    auto out = run(b, {x});
    expect_equal(out[0], nonzero);
    EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 3, 1, 2}));
    EXPECT_EQ(out[2].to_ints(), (std::vector<int64_t>{0, 1, 2, 5}));
    EXPECT_EQ(out[3].to_ints(), (std::vector<int64_t>{0, 1, 2, 1, 0, 3}));
    EXPECT_EQ(out[4].to_ints(), (std::vector<int64_t>{2, 2, 1, 1}));
  }
  {
    OnnxModelBuilder b(13);
    b.output_any("n", onnx::TensorProto::INT64).output_any("y").initializer("x", x);
    b.node("NonZero", {"x"}, {"n"});
    b.node("Unique", {"x"}, {"y"});
    OnnxImportOptions options;
    options.freeze_params = true;
    OnnxModel m = from_onnx_bytes(b.bytes(), options, "test.onnx");
    std::string text = print_module(m.module);
    EXPECT_FALSE(contains(text, "argwhere"));
    EXPECT_FALSE(contains(text, "unique("));
    auto out = interpret(m.module, "main", {}).flatten();
    expect_equal(out[0], nonzero);
    EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{0, 1, 2, 3}));
  }
}

TEST(OnnxIndexingConverters, EyeLikeReverseSequenceAndTfIdf) {
  OnnxModelBuilder b(10);
  b.input("x", {3, 4})
      .input("s", {4, 2})
      .input("l", {2}, onnx::TensorProto::INT64)
      .output_any("e", onnx::TensorProto::INT32);
  b.output_any("r").input("t", {5}, onnx::TensorProto::INT32).output_any("f");
  auto& eye = b.node("EyeLike", {"x"}, {"e"});
  set_attr(eye, "k", int64_t{1});
  set_attr(eye, "dtype", int64_t{onnx::TensorProto::INT32});
  auto& rs = b.node("ReverseSequence", {"s", "l"}, {"r"});
  set_attr(rs, "time_axis", int64_t{0});
  set_attr(rs, "batch_axis", int64_t{1});
  auto& tf = b.node("TfIdfVectorizer", {"t"}, {"f"});
  set_attr(tf, "mode", std::string("TF"));
  set_attr(tf, "min_gram_length", int64_t{2});
  set_attr(tf, "max_gram_length", int64_t{2});
  set_attr(tf, "max_skip_count", int64_t{0});
  set_attr(tf, "ngram_counts", std::vector<int64_t>{0, 0});
  set_attr(tf, "ngram_indexes", std::vector<int64_t>{1, 0});
  set_attr(tf, "pool_int64s", std::vector<int64_t>{5, 6, 6, 5});
  auto out = run(b, {tensor({3, 4}, std::vector<double>(12, 7)), tensor({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
                     i64({2}, {3, 1}), tensor({5}, {5, 6, 5, 6, 6}, DType::kInt32)});
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].to_ints(), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{4, 1, 2, 3, 0, 5, 6, 7}));
  // Pool (5, 6) -> slot 1, (6, 5) -> slot 0: bigrams 56 65 56 66.
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{1, 2}));
}

// A depth known only at run time imports as dyn.one_hot, whose result has a '?' extent; a
// known depth below 1 is an error naming it.
TEST(OnnxIndexingConverters, OneHotDepthAtRunTimeOrInvalid) {
  OnnxModelBuilder b(11);
  b.input("i", {3}, onnx::TensorProto::INT64).input("depth", {}).output_any("y");
  b.initializer("values", tensor({2}, {0, 1}));
  b.node("OneHot", {"i", "depth", "values"}, {"y"});
  OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  EXPECT_TRUE(contains(print_module(m.module), "dyn.one_hot(")) << print_module(m.module);
  NDArray y = interpret(bind_params(m.module, m.params), "main", {i64({3}, {0, -1, 5}), tensor({}, {3})}).tensor();
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0}));

  OnnxModelBuilder zero(11);
  zero.input("i", {3}, onnx::TensorProto::INT64).output_any("y");
  zero.initializer("depth", tensor({}, {0})).initializer("values", tensor({2}, {0, 1}));
  zero.node("OneHot", {"i", "depth", "values"}, {"y"});
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes(zero.bytes(), {}, "test.onnx"); }), "must be positive"));
}

}  // namespace
}  // namespace kiln::testing
