// Limits on input sizes (kiln/support/limits.h): a hostile model or file is an error naming
// the limit, never an out-of-memory kill or an overflow.
#include "kiln/support/limits.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "frontend/onnx_test_util.h"
#include "kiln/frontend/onnx.h"
#include "kiln/runtime/ndarray.h"
#include "test_util.h"

namespace kiln::testing {
namespace {

// Sets limits for one test and restores the previous ones.
class ScopedLimits {
 public:
  explicit ScopedLimits(const Limits& limits) : saved_(kiln::limits()) { set_limits(limits); }
  ~ScopedLimits() { set_limits(saved_); }

 private:
  Limits saved_;
};

TEST(Limits, CountsElementsOfShapesWithinTheLimits) {
  EXPECT_EQ(checked_tensor_elements(std::vector<int64_t>{2, 3, 4}, 4, "t"), 24);
  EXPECT_EQ(checked_tensor_elements(std::vector<int64_t>{}, 4, "t"), 1);
  // A zero dimension empties the tensor, whatever the others multiply to.
  EXPECT_EQ(checked_tensor_elements(std::vector<int64_t>{0, int64_t{1} << 62, 8}, 4, "t"), 0);
}

TEST(Limits, RefusesOverflowHugeAndDeepShapes) {
  EXPECT_TRUE(contains(error_of([] {
                         checked_tensor_elements(std::vector<int64_t>{int64_t{1} << 62, 4}, 1, "x");
                       }),
                       "x of shape (4611686018427387904, 4) has more elements than int64 can count"));
  EXPECT_TRUE(contains(error_of([] {
                         checked_tensor_elements(std::vector<int64_t>{1000000, 1000000}, 4, "x");
                       }),
                       "has 1000000000000 elements, above the limit of 4294967296 (KILN_MAX_TENSOR_ELEMENTS)"));
  EXPECT_TRUE(contains(error_of([] { checked_tensor_elements(std::vector<int64_t>(65, 1), 4, "x"); }),
                       "x has rank 65, above the limit of 64 (KILN_MAX_RANK)"));
  EXPECT_TRUE(contains(error_of([] {
                         checked_tensor_elements(std::vector<int64_t>{2, -3}, 4, "x");
                       }),
                       "x has a negative dimension -3 in shape (2, -3)"));
  Limits small;
  small.max_tensor_bytes = 1 << 20;
  ScopedLimits scoped(small);
  EXPECT_TRUE(contains(error_of([] {
                         checked_tensor_elements(std::vector<int64_t>{1024, 1024}, 4, "x");
                       }),
                       "needs 4 MiB, above the limit of 1 MiB (KILN_MAX_TENSOR_BYTES)"));
}

TEST(Limits, EnvironmentVariablesOverrideTheDefaults) {
  ::setenv("KILN_MAX_NODES", "12", 1);
  ::setenv("KILN_MAX_RANK", "7", 1);
  const Limits from_env = Limits::from_environment();
  ::unsetenv("KILN_MAX_NODES");
  ::unsetenv("KILN_MAX_RANK");
  EXPECT_EQ(from_env.max_nodes, 12);
  EXPECT_EQ(from_env.max_rank, 7);
  EXPECT_EQ(from_env.max_tensor_bytes, Limits().max_tensor_bytes);
  ::setenv("KILN_MAX_NODES", "lots", 1);
  const std::string error = error_of([] { Limits::from_environment(); });
  ::unsetenv("KILN_MAX_NODES");
  EXPECT_TRUE(contains(error, "environment variable KILN_MAX_NODES='lots' is not a positive integer"));
}

TEST(Limits, AllocatingAHugeTensorIsAnErrorNotAnOutOfMemoryKill) {
  EXPECT_TRUE(contains(error_of([] {
                         NDArray::empty({1000000, 1000000}, DType::kFloat32);
                       }),
                       "tensor of shape (1000000, 1000000) has 1000000000000 elements"));
  EXPECT_TRUE(contains(error_of([] {
                         NDArray::empty({int64_t{1} << 40, int64_t{1} << 40}, DType::kInt8);
                       }),
                       "more elements than int64 can count"));
}

OnnxModelBuilder relu_of(const std::vector<int64_t>& dims) {
  OnnxModelBuilder b;
  b.input("x", dims).output("y", dims);
  b.node("Relu", {"x"}, {"y"}, "relu1");
  return b;
}

TEST(Limits, OnnxInputsDeclaringHugeOrDeepTensorsAreRefused) {
  auto import = [](const OnnxModelBuilder& b) { from_onnx_bytes(b.bytes(), {}, "m.onnx"); };
  EXPECT_TRUE(contains(error_of([&] {
                         import(relu_of({1000000, 1000000}));
                       }),
                       "m.onnx: input 'x' of shape (1000000, 1000000) has 1000000000000 elements"));
  EXPECT_TRUE(contains(error_of([&] {
                         import(relu_of({int64_t{1} << 40, int64_t{1} << 40}));
                       }),
                       "more elements than int64 can count"));
  EXPECT_TRUE(contains(error_of([&] { import(relu_of(std::vector<int64_t>(100, 1))); }),
                       "input 'x' has rank 100, above the limit of 64 (KILN_MAX_RANK)"));
  // Unknown dimensions do not count; the known ones still must fit.
  EXPECT_NO_THROW(import(relu_of({-1, 1000})));
}

TEST(Limits, OnnxGraphsWithTooManyNodesAreRefused) {
  OnnxModelBuilder b;
  b.input("x", {2}).output("y", {2});
  std::string last = "x";
  for (int i = 0; i < 20; ++i) {
    const std::string out = i == 19 ? "y" : cat("t", i);
    b.node("Relu", {last}, {out});
    last = out;
  }
  Limits small;
  small.max_nodes = 10;
  ScopedLimits scoped(small);
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes(b.bytes(), {}, "m.onnx"); }),
                       "m.onnx: graph 'test' has 20 nodes, above the limit of 10 (KILN_MAX_NODES)"));
}

// If nodes nested `depth` deep, each branch the next level.
onnx::GraphProto nested_if_graph(int depth, const std::string& name) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* out = g.add_output();
  out->set_name(name + "_out");
  auto* t = out->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  auto* n = g.add_node();
  n->add_output(name + "_out");
  if (depth == 0) {
    n->set_op_type("Identity");
    n->add_input("x");
    return g;
  }
  n->set_op_type("If");
  n->add_input("c");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = nested_if_graph(depth - 1, cat(name, "_", branch[0], depth));
  }
  return g;
}

TEST(Limits, SubgraphsNestedTooDeepAreRefused) {
  OnnxModelBuilder b;
  b.input("x", {2}).input("c", {}, onnx::TensorProto::BOOL);
  onnx::GraphProto body = nested_if_graph(3, "g");
  for (const auto& n : body.node()) *b.graph().add_node() = n;
  b.output("g_out", {2});
  Limits small;
  small.max_nesting_depth = 2;
  ScopedLimits scoped(small);
  EXPECT_TRUE(contains(error_of([&] { from_onnx_bytes(b.bytes(), {}, "m.onnx"); }),
                       "m.onnx: subgraphs (bodies of If, Loop, Scan) nest 3 deep, above the limit of 2 "
                       "(KILN_MAX_NESTING_DEPTH)"));
  set_limits(Limits());
  EXPECT_NO_THROW(from_onnx_bytes(b.bytes(), {}, "m.onnx"));
}

TEST(Limits, LongStringAttributesAreRefused) {
  OnnxModelBuilder b;
  b.input("x", {2}).input("pads", {2}, onnx::TensorProto::INT64).output("y", {2});
  set_attr(b.node("Pad", {"x", "pads"}, {"y"}, "pad1"), "mode", std::string(100, 'a'));
  Limits small;
  small.max_string_bytes = 16;
  ScopedLimits scoped(small);
  EXPECT_TRUE(
      contains(error_of([&] { from_onnx_bytes(b.bytes(), {}, "m.onnx"); }),
               "attribute 'mode': its value is 100 bytes, above the limit of 16 bytes (KILN_MAX_STRING_BYTES)"));
}

}  // namespace
}  // namespace kiln::testing
