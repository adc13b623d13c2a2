// Type relation and reference kernel of unreachable, the run-time trap the ONNX importer
// puts in place of an If branch that does not convert.
#include "op_test_util.h"

namespace kiln::testing {
namespace {

using Ints = std::vector<int64_t>;

Attrs trap_attrs(Ints shape, const std::string& dtype) {
  return {{"message", std::string("branch was not converted")}, {"shape", std::move(shape)}, {"dtype", dtype}};
}

TEST(ControlUnreachableType, ShapeAndDTypeFromAttributes) {
  EXPECT_EQ(type_str(infer_op("unreachable", {}, trap_attrs({2, 1, 128}, "float32"))), "Tensor[(2, 1, 128), float32]");
  EXPECT_EQ(type_str(infer_op("unreachable", {}, trap_attrs({}, "int64"))), "int64");
  // It stands for a value of the other branch, whose dimensions may be unknown.
  EXPECT_EQ(type_str(infer_op("unreachable", {}, trap_attrs({-1, 4}, "float16"))), "Tensor[(?, 4), float16]");
  const OpDef& def = OpRegistry::global().get("unreachable");
  EXPECT_EQ(def.pattern, OpPattern::kOpaque);
  EXPECT_TRUE(def.nondeterministic);  // never folded into a constant
}

TEST(ControlUnreachableType, Errors) {
  std::string msg = infer_op_error("unreachable", {}, trap_attrs({2, -3}, "float32"));
  EXPECT_NE(msg.find("'unreachable'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'shape'"), std::string::npos) << msg;
  msg = infer_op_error("unreachable", {}, trap_attrs({2}, "float"));
  EXPECT_NE(msg.find("'dtype'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"float\""), std::string::npos) << msg;
  msg = infer_op_error("unreachable", {}, {{"shape", Ints{2}}});
  EXPECT_NE(msg.find("'message'"), std::string::npos) << msg;
  msg = infer_op_error("unreachable", {f32({2})}, trap_attrs({2}, "float32"));
  EXPECT_NE(msg.find("number of arguments"), std::string::npos) << msg;
}

TEST(ControlUnreachableKernel, ThrowsTheStoredMessage) {
  try {
    run_op("unreachable", {}, trap_attrs({2, 3}, "float32"));
    FAIL() << "unreachable ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "branch was not converted");
  }
}

}  // namespace
}  // namespace kiln::testing
