// Shape-like inputs given at run time (Reshape's shape, Slice's bounds, Pad's pads, TopK's K,
// axes, ...) import as the dyn.* ops, and the model gives the same values as when the inputs
// are baked into it (fixed_inputs), which imports the static ops.
#include <gtest/gtest.h>

#include "frontend/onnx_test_util.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/printer.h"
#include "kiln/support/strings.h"

namespace kiln::testing {
namespace {

struct Input {
  std::string name;
  NDArray value;
};

NDArray iota(Shape shape) {
  NDArray t = NDArray::empty(shape, DType::kFloat32);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i % 7) - 2.5);
  return t;
}

// `dyn_op` is imported with every input at run time; baking all but the first gives the same.
void expect_dyn_matches_baked(OnnxModelBuilder& b, const std::vector<Input>& inputs, const std::string& dyn_op) {
  OnnxModel dynamic = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  std::string text = print_module(dynamic.module);
  EXPECT_TRUE(contains(text, dyn_op + "(")) << text;
  std::vector<Value> args;
  for (const Input& in : inputs) args.emplace_back(in.value);
  std::vector<NDArray> got = interpret(bind_params(dynamic.module, dynamic.params), "main", args).flatten();
  OnnxImportOptions options;
  for (size_t i = 1; i < inputs.size(); ++i) options.fixed_inputs[inputs[i].name] = inputs[i].value;
  OnnxModel baked = from_onnx_bytes(b.bytes(), options, "test.onnx");
  EXPECT_FALSE(contains(print_module(baked.module), "dyn."));
  std::vector<NDArray> want =
      interpret(bind_params(baked.module, baked.params), "main", {Value(inputs[0].value)}).flatten();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].same_as(want[i])) << dyn_op << " output " << i << ": " << shape_str(got[i].shape()) << " vs "
                                         << shape_str(want[i].shape());
}

constexpr int kInt64 = onnx::TensorProto::INT64;

TEST(OnnxDynConverters, ReshapeSliceExpandTile) {
  {
    OnnxModelBuilder b;
    b.input("x", {2, 3, 4}).input("s", {2}, kInt64).output_any("y");
    b.node("Reshape", {"x", "s"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({2, 3, 4})}, {"s", ints({0, -1})}}, "dyn.reshape");
  }
  {
    OnnxModelBuilder b;
    b.input("x", {4, 5}).input("b", {2}, kInt64).input("e", {2}, kInt64).input("a", {2}, kInt64).output_any("y");
    b.node("Slice", {"x", "b", "e", "a"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({4, 5})}, {"b", ints({1, 0})}, {"e", ints({100, -1})}, {"a", ints({1, 0})}},
                             "dyn.strided_slice");
  }
  {
    OnnxModelBuilder b;
    b.input("x", {3, 1}).input("s", {3}, kInt64).output_any("y");
    b.node("Expand", {"x", "s"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({3, 1})}, {"s", ints({2, 1, 4})}}, "dyn.broadcast_to");
  }
  {
    OnnxModelBuilder b;
    b.input("x", {2, 3}).input("r", {2}, kInt64).output_any("y");
    b.node("Tile", {"x", "r"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({2, 3})}, {"r", ints({3, 2})}}, "dyn.tile");
  }
}

TEST(OnnxDynConverters, PadTopKAxesAndReduceSum) {
  {
    OnnxModelBuilder b(13);
    b.input("x", {2, 3}).input("p", {4}, kInt64).output_any("y");
    set_attr(b.node("Pad", {"x", "p"}, {"y"}), "mode", std::string("reflect"));
    expect_dyn_matches_baked(b, {{"x", iota({2, 3})}, {"p", ints({1, 2, 0, 1})}}, "dyn.pad");
  }
  {
    OnnxModelBuilder b(11);
    b.input("x", {3, 4}).input("k", {1}, kInt64).output_any("v").output_any("i", kInt64);
    b.node("TopK", {"x", "k"}, {"v", "i"});
    expect_dyn_matches_baked(b, {{"x", iota({3, 4})}, {"k", ints({2})}}, "dyn.topk");
  }
  {
    OnnxModelBuilder b(13);
    b.input("x", {2, 3}).input("a", {2}, kInt64).output_any("y");
    b.node("Unsqueeze", {"x", "a"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({2, 3})}, {"a", ints({-1, 1})}}, "dyn.expand_dims");
  }
  {
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 1}).input("a", {1}, kInt64).output_any("y");
    b.node("Squeeze", {"x", "a"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({1, 3, 1})}, {"a", ints({0})}}, "dyn.squeeze");
  }
  {
    OnnxModelBuilder b(13);
    b.input("x", {2, 3, 2}).input("a", {2}, kInt64).output_any("y");
    set_attr(b.node("ReduceSum", {"x", "a"}, {"y"}), "keepdims", int64_t{0});
    expect_dyn_matches_baked(b, {{"x", iota({2, 3, 2})}, {"a", ints({0, -1})}}, "dyn.reduce");
  }
}

TEST(OnnxDynConverters, CumSumAndTrilu) {
  {
    OnnxModelBuilder b(14);
    b.input("x", {2, 3}).input("a", {}, kInt64).output_any("y");
    set_attr(b.node("CumSum", {"x", "a"}, {"y"}), "exclusive", int64_t{1});
    expect_dyn_matches_baked(b, {{"x", iota({2, 3})}, {"a", NDArray::from_vector<int64_t>({}, {-1})}}, "dyn.cumsum");
  }
  {
    OnnxModelBuilder b(14);
    b.input("x", {3, 4}).input("k", {}, kInt64).output_any("y");
    b.node("Trilu", {"x", "k"}, {"y"});
    expect_dyn_matches_baked(b, {{"x", iota({3, 4})}, {"k", NDArray::from_vector<int64_t>({}, {1})}}, "dyn.trilu");
  }
}

TEST(OnnxDynConverters, ConstantOfShapeAndRange) {
  {
    OnnxModelBuilder b;
    b.input("s", {2}, kInt64).output_any("y");
    b.node("ConstantOfShape", {"s"}, {"y"});
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
    EXPECT_TRUE(contains(print_module(m.module), "dyn.full("));
    NDArray y = interpret(m.module, "main", {Value(ints({2, 3}))}).tensor();
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    EXPECT_EQ(y.at(5), 0.0);
  }
  {
    OnnxModelBuilder b(11);
    b.input("a", {}, kInt64).input("l", {}, kInt64).input("d", {}, kInt64).output_any("y", kInt64);
    b.node("Range", {"a", "l", "d"}, {"y"});
    OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
    EXPECT_TRUE(contains(print_module(m.module), "dyn.arange("));
    auto scalar = [](int64_t v) { return NDArray::from_vector<int64_t>({}, {v}); };
    NDArray y = interpret(m.module, "main", {Value(scalar(1)), Value(scalar(8)), Value(scalar(3))}).tensor();
    EXPECT_EQ(y.shape(), (Shape{3}));
    EXPECT_EQ(y.int_at(2), 7);
  }
}

}  // namespace
}  // namespace kiln::testing
