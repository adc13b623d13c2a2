// The op semantics behind ONNX opsets 18 to 21 on the typed-attribute ops: scatter max / min,
// resize antialias, the reductions' and cast's declared attributes. Kernels against hand-worked
// values.
#include "kiln/attrs/image.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/reduce.h"
#include "kiln/attrs/unary.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

// ---- scatter_elements / scatter_nd max and min ----

TEST(ScatterMaxMin, ElementsAccumulateInIndexOrder) {
  NDArray data = tensor({2, 3}, {1, 5, 2, 7, 0, 3});
  NDArray indices = tensor({2, 2}, {0, 0, 2, 1}, DType::kInt64);
  NDArray updates = tensor({2, 2}, {4, 0, 9, -2});
  // Row 0: positions 0, 0 get 4 then 0; row 1: position 2 gets 9, position 1 gets -2.
  expect_close(run_op("scatter_elements", {data, indices, updates}, {{"axis", int64_t{1}}, {"reduction", "max"}})[0],
               {4, 5, 2, 7, 0, 9});
  expect_close(run_op("scatter_elements", {data, indices, updates}, {{"axis", int64_t{1}}, {"reduction", "min"}})[0],
               {0, 5, 2, 7, -2, 3});
}

TEST(ScatterMaxMin, NdSlicesAndIntegers) {
  NDArray data = tensor({3, 2}, {1, 8, -3, 4, 6, 0}, DType::kInt32);
  NDArray indices = tensor({1, 3}, {0, 2, 0}, DType::kInt64);  // coordinates first (M = 1)
  NDArray updates = tensor({3, 2}, {5, 2, -7, 9, 0, 11}, DType::kInt32);
  EXPECT_EQ(run_op("scatter_nd", {data, indices, updates}, {{"mode", "max"}})[0].to_ints(), (Ints{5, 11, -3, 4, 6, 9}));
  EXPECT_EQ(run_op("scatter_nd", {data, indices, updates}, {{"mode", "min"}})[0].to_ints(), (Ints{0, 2, -3, 4, -7, 0}));
}

TEST(ScatterMaxMin, UnknownReductionNamesTheAttribute) {
  std::string e =
      infer_op_error("scatter_nd", {f32({3, 2}), tensor_type({1, 3}, DType::kInt64), f32({3, 2})}, {{"mode", "mean"}});
  EXPECT_NE(e.find("attribute 'mode'"), std::string::npos) << e;
  EXPECT_NE(e.find("update, add, mul, min or max"), std::string::npos) << e;
}

// ---- image.resize2d antialias ----

Attrs resize_attrs(int64_t w, bool antialias, int64_t exclude = 0, const std::string& method = "linear") {
  Resize2DAttrs a;
  a.size = {1, w};
  a.method = method;
  a.antialias = antialias;
  a.cubic_exclude = exclude;
  return attrs_to(a);
}

// Halving [1, 2, 3, 4]: the triangle stretched to radius 2 puts weights 1/8, 3/8, 3/8, 1/8 on the
// four inputs nearest each output centre (0.5 and 2.5); outside taps clamp to the edge.
TEST(ResizeAntialias, LinearHalvingByHand) {
  NDArray x = tensor({1, 1, 1, 4}, {1, 2, 3, 4});
  expect_close(run_op("image.resize2d", {x}, resize_attrs(2, true))[0], {1.625, 3.375});
  // Without antialias the two nearest inputs share the weight.
  expect_close(run_op("image.resize2d", {x}, resize_attrs(2, false))[0], {1.5, 3.5});
  // exclude_outside drops the taps beyond either end and renormalises what remains.
  expect_close(run_op("image.resize2d", {x}, resize_attrs(2, true, 1))[0], {3.0 / 1.75, 5.75 / 1.75});
}

// Enlarging is not filtered: antialias changes nothing.
TEST(ResizeAntialias, EnlargingIsPlainInterpolation) {
  NDArray x = tensor({1, 1, 1, 3}, {1, -2, 5});
  for (const char* method : {"linear", "cubic"}) {
    SCOPED_TRACE(method);
    NDArray plain = run_op("image.resize2d", {x}, resize_attrs(7, false, 0, method))[0];
    expect_close(run_op("image.resize2d", {x}, resize_attrs(7, true, 0, method))[0], plain.to_doubles());
  }
}

// The weights of each output sum to 1: a constant image stays constant at any scale.
TEST(ResizeAntialias, ConstantImageStaysConstant) {
  NDArray x = tensor({1, 1, 2, 9}, std::vector<double>(18, 2.5));
  for (const char* method : {"linear", "cubic"})
    for (int64_t w : {1, 2, 4})
      expect_close(run_op("image.resize2d", {x}, resize_attrs(w, true, 0, method))[0],
                   std::vector<double>(static_cast<size_t>(w), 2.5));
}

TEST(ResizeAttrs, ValidateNamesTheAttribute) {
  std::string e = infer_op_error("image.resize2d", {f32({1, 1, 4, 4})}, {{"size", Ints{2}}});
  EXPECT_NE(e.find("attribute 'size'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 1, 4, 4})}, {{"size", Ints{2, 2}}, {"method", "area"}});
  EXPECT_NE(e.find("'method'"), std::string::npos) << e;
  e = infer_op_error("image.resize2d", {f32({1, 1, 4, 4})}, {});
  EXPECT_NE(e.find("missing required attribute 'size'"), std::string::npos) << e;
}

// ---- reductions and cast, declared ----

TEST(ReduceAttrs, ReducedAxes) {
  ReduceAttrs a;
  EXPECT_EQ(a.reduced_axes({2, 3}), (std::vector<bool>{true, true}));
  a.axis = Ints{-1};
  EXPECT_EQ(a.reduced_axes({2, 3, 4}), (std::vector<bool>{false, false, true}));
  a.exclude = true;
  EXPECT_EQ(a.reduced_axes({2, 3, 4}), (std::vector<bool>{true, true, false}));
  a.axis = Ints{1, -2};
  std::string e = infer_op_error("sum", {f32({2, 3, 4})}, attrs_to(a));
  EXPECT_NE(e.find("lists axis 1 more than once"), std::string::npos) << e;
  e = infer_op_error("max", {f32({2, 3})}, {{"axis", Ints{2}}});
  EXPECT_NE(e.find("attribute 'axis' has 2, out of range"), std::string::npos) << e;
}

TEST(ReduceAttrs, KernelsReadTheStruct) {
  ArgReduceAttrs a;
  a.axis = Ints{1};
  a.select_last_index = true;
  EXPECT_EQ(run_op("argmax", {tensor({2, 3}, {1, 4, 4, 7, 7, 0})}, attrs_to(a))[0].to_ints(), (Ints{2, 1}));
  ReduceAttrs r;
  r.axis = Ints{0};
  r.keepdims = true;
  auto out = run_op("prod", {tensor({2, 2}, {2, 3, 4, 5})}, attrs_to(r));
  EXPECT_EQ(out[0].shape(), (Shape{1, 2}));
  expect_close(out[0], {8, 15});
}

TEST(CastAttrs, DtypeIsChecked) {
  std::string e = infer_op_error("cast", {f32({2})}, {{"dtype", "float8"}});
  EXPECT_NE(e.find("attribute 'dtype' is not a dtype"), std::string::npos) << e;
  CastAttrs a;
  a.dtype = "int8";
  EXPECT_EQ(run_op("cast", {tensor({3}, {-300, 2.7, 300})}, attrs_to(a))[0].to_ints(), (Ints{-128, 2, 127}));
}

TEST(IndexingAttrs, SliceAndTakeRoundTrip) {
  StridedSliceAttrs s;
  s.begin = {1};
  s.end = {-1};
  s.axes = Ints{1};
  expect_close(run_op("strided_slice", {tensor({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}, attrs_to(s))[0], {1, 2, 5, 6});
  TakeAttrs t;
  t.mode = "nearest";
  std::string e = infer_op_error("take", {f32({3}), tensor_type({2}, DType::kInt64)}, attrs_to(t));
  EXPECT_NE(e.find("'mode'"), std::string::npos) << e;
}

}  // namespace
}  // namespace kiln::testing
