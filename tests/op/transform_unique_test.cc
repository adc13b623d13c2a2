// argwhere and unique, whose result extents depend on the data: relations give '?', and the
// kernels size those outputs themselves (checked against numpy).
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

// Runs a kernel as the interpreter does: outputs of unknown extent arrive undefined.
std::vector<NDArray> run_dynamic(const std::string& op, const NDArray& input, const Attrs& attrs = {}) {
  const OpDef& def = OpRegistry::global().get(op);
  Attrs full = def.normalize(attrs);
  Type out = def.relation({tensor_type(input.shape(), input.dtype())}, full);
  std::vector<NDArray> outputs;
  auto alloc = [&](const Type& t) {
    const TensorTypeNode& tt = expect_tensor(t, "output");
    outputs.push_back(tt.is_static() ? NDArray::empty(tt.shape, tt.dtype) : NDArray());
  };
  if (const auto* tu = as_tuple(out))
    for (const auto& f : tu->fields) alloc(f);
  else
    alloc(out);
  std::vector<NDArray> inputs{input};
  KernelRegistry::global().get(def.kernel)(full, inputs, outputs);
  return outputs;
}

TEST(TransformArgwhere, TypeRelationAndKernel) {
  EXPECT_EQ(type_str(infer_op("argwhere", {f32({3, 4})})), "Tensor[(?, 2), int64]");
  NDArray x = tensor({2, 3}, {0, 1.5, 0, -2, 0, 3});
  auto out = run_dynamic("argwhere", x);
  expect_same(out[0], numpy_eval("r = np.argwhere(np.array([[0, 1.5, 0], [-2, 0, 3]]))")[0]);
  EXPECT_EQ(out[0].dtype(), DType::kInt64);
  EXPECT_EQ(run_dynamic("argwhere", tensor({2}, {0, 0}))[0].shape(), (Shape{0, 1}));
}

TEST(TransformUnique, TypeRelationAndErrors) {
  EXPECT_EQ(type_str(infer_op("unique", {f32({2, 3})})),
            "(Tensor[(?), float32], Tensor[(?), int64], Tensor[(6), int64], Tensor[(?), int64])");
  EXPECT_EQ(type_str(infer_op("unique", {f32({2, 3})}, {{"axis", int64_t{1}}})),
            "(Tensor[(2, ?), float32], Tensor[(?), int64], Tensor[(3), int64], Tensor[(?), int64])");
  expect_mentions(infer_op_error("unique", {f32({2, 3})}, {{"axis", int64_t{2}}}),
                  {"op 'unique'", "unique axis out of range", "[-2, 2)", "found 2"});
}

TEST(TransformUnique, FlattenedAgainstNumpy) {
  NDArray x = tensor({2, 3}, {2, 1, 1, 3, 4, 3});
  auto out = run_dynamic("unique", x);
  auto ref = numpy_eval("r = np.unique(np.array([2, 1, 1, 3, 4, 3.]), True, True, True)");
  for (int i = 0; i < 4; ++i) expect_same(out[i], ref[i]);
  // Unsorted: first-occurrence order 2, 1, 3, 4.
  auto unsorted = run_dynamic("unique", x, {{"sorted", false}});
  EXPECT_EQ(unsorted[0].to_doubles(), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ(unsorted[1].to_ints(), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(unsorted[2].to_ints(), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(unsorted[3].to_ints(), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(TransformUnique, AlongAnAxisAgainstNumpy) {
  NDArray x = tensor({2, 3, 2}, {1, 1, 0, 1, 1, 1, 2, 1, 0, 1, 2, 1}, DType::kInt32);
  for (int64_t axis : {0, 1, 2}) {
    auto out = run_dynamic("unique", x, {{"axis", axis}});
    auto ref = numpy_eval(
        "x = np.array([1, 1, 0, 1, 1, 1, 2, 1, 0, 1, 2, 1]).reshape(2, 3, 2)\n"
        "r = np.unique(x, True, True, True, axis=" +
        std::to_string(axis) + ")");
    for (int i = 0; i < 4; ++i) expect_same(out[i], ref[i]);
    EXPECT_EQ(out[0].dtype(), DType::kInt32);
  }
}

}  // namespace
}  // namespace kiln::testing
