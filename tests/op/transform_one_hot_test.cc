// one_hot and reverse_sequence: type relations, errors, and kernels against numpy.
#include "op/transform_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

Type i64(Shape shape) { return tensor_type(std::move(shape), DType::kInt64); }

TEST(TransformOneHot, TypeRelationAndErrors) {
  Attrs attrs{{"depth", int64_t{5}}, {"axis", int64_t{1}}, {"dtype", "int32"}};
  EXPECT_EQ(type_str(infer_op("one_hot", {i64({2, 3}), f32({}), f32({})}, attrs)), "Tensor[(2, 5, 3), int32]");
  EXPECT_EQ(type_str(infer_op("one_hot", {i64({2, 3}), f32({}), f32({})}, {{"depth", int64_t{5}}})),
            "Tensor[(2, 3, 5), float32]");
  expect_mentions(infer_op_error("one_hot", {i64({2}), f32({2}), f32({})}, {{"depth", int64_t{5}}}),
                  {"op 'one_hot'", "'on_value'", "scalar", "(2)"});
  expect_mentions(infer_op_error("one_hot", {f32({2}), f32({}), f32({})}, {{"depth", int64_t{5}}}),
                  {"op 'one_hot'", "'indices'", "integers", "float32"});
  expect_mentions(
      infer_op_error("one_hot", {i64({2}), f32({}), f32({})}, {{"depth", int64_t{5}}, {"axis", int64_t{2}}}),
      {"op 'one_hot'", "axis out of range", "[-2, 2)"});
}

TEST(TransformOneHot, KernelAgainstNumpy) {
  NDArray indices = tensor({2, 2}, {0, 3, 7, 1}, DType::kInt64);  // 7 is out of range: all off
  NDArray on = NDArray::scalar(DType::kFloat32, 5), off = NDArray::scalar(DType::kFloat32, -1);
  for (int64_t axis : {0, 1, -1}) {
    NDArray out = run_op("one_hot", {indices, on, off}, {{"depth", int64_t{4}}, {"axis", axis}})[0];
    auto ref = numpy_eval(
        "i = np.array([[0, 3], [7, 1]])\nh = np.where(i[..., None] == np.arange(4), 5.0, -1.0)\n"
        "r = np.moveaxis(h, -1, " +
        std::to_string(axis) + ")");
    expect_same(out, ref[0]);
  }
}

TEST(TransformReverseSequence, TypeRelationAndErrors) {
  EXPECT_EQ(type_str(infer_op("reverse_sequence", {f32({4, 3}), i64({3})},
                              {{"seq_axis", int64_t{0}}, {"batch_axis", int64_t{1}}})),
            "Tensor[(4, 3), float32]");
  expect_mentions(infer_op_error("reverse_sequence", {f32({4, 3}), i64({4})},
                                 {{"seq_axis", int64_t{0}}, {"batch_axis", int64_t{1}}}),
                  {"op 'reverse_sequence'", "'seq_lengths'", "(4, 3)", "shape (3)", "int64 (4)"});
  expect_mentions(infer_op_error("reverse_sequence", {f32({4, 3}), i64({4})},
                                 {{"seq_axis", int64_t{0}}, {"batch_axis", int64_t{0}}}),
                  {"op 'reverse_sequence'", "must differ"});
}

TEST(TransformReverseSequence, KernelAgainstNumpy) {
  NDArray data = iota({4, 3});
  NDArray lengths = tensor({3}, {4, 2, 1}, DType::kInt64);
  NDArray out = run_op("reverse_sequence", {data, lengths}, {{"seq_axis", int64_t{0}}, {"batch_axis", int64_t{1}}})[0];
  auto ref = numpy_eval("d = " + numpy_iota({4, 3}) +
                        "\nr = d.copy()\nfor b, n in enumerate([4, 2, 1]):\n  r[:n, b] = d[:n, b][::-1]");
  expect_same(out, ref[0]);
}

}  // namespace
}  // namespace kiln::testing
