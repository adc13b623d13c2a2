// A ResNet-style block built with TpuLang and run through kiln equals the same block written
// in PyTorch, exported to ONNX and imported by kiln (both run by kiln's interpreter, with the
// same weights): conv 3x3 / 2 -> relu -> conv 3x3, a 1x1 / 2 projection shortcut, add, relu,
// global average pool, flatten, fully connected, softmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/type.h"
#include "kiln/runtime/npy.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/from_kiln.h"
#include "kiln/tpulang/ops.h"
#include "kiln/tpulang/to_kiln.h"
#include "runtime/runtime_test_util.h"
#include "test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

using testing::tpulang::weights;

const char* kExportScript = R"(
import numpy as np
import torch

w = np.load('weights.npz')

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(4, 8, 1, stride=2)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        y = torch.relu(y + self.down(x))
        y = torch.nn.functional.avg_pool2d(y, 4)
        return torch.softmax(self.fc(torch.flatten(y, 1)), dim=1)

block = Block()
with torch.no_grad():
    for layer in ['conv1', 'conv2', 'down', 'fc']:
        getattr(block, layer).weight.copy_(torch.from_numpy(w[layer + '_w']))
        getattr(block, layer).bias.copy_(torch.from_numpy(w[layer + '_b'].reshape(-1)))
torch.onnx.export(block, torch.zeros(1, 4, 8, 8), 'block.onnx', input_names=['x'], output_names=['y'],
                  opset_version=13)
)";

TEST(TpuLangResNetBlock, MatchesPyTorchExportThroughKiln) {
  Graph g;
  auto weight = [&](const std::string& name, Shape shape, uint32_t seed) {
    NDArray data = weights(shape, seed);
    for (int64_t i = 0; i < data.numel(); ++i) data.set(i, data.at(i) * 0.5);
    return g.tensor(shape, name, "float32", data);
  };
  Tensor x = g.tensor({1, 4, 8, 8}, "x");
  Tensor c1 =
      conv_v2(x, weight("conv1_w", {8, 4, 3, 3}, 1), weight("conv1_b", {1, 8, 1, 1}, 2), {2, 2}, {}, {1, 1, 1, 1});
  Tensor c2 =
      conv_v2(relu(c1), weight("conv2_w", {8, 8, 3, 3}, 3), weight("conv2_b", {1, 8, 1, 1}, 4), {}, {}, {1, 1, 1, 1});
  Tensor shortcut = conv_v2(x, weight("down_w", {8, 4, 1, 1}, 5), weight("down_b", {1, 8, 1, 1}, 6), {2, 2});
  Tensor pooled = avgpool(relu(add(c2, shortcut)), {4, 4}, {4, 4});
  Tensor logits = matmul(reshape(pooled, {1, -1}), weight("fc_w", {10, 8}, 7), weight("fc_b", {10}, 8), true);
  Tensor y = softmax(logits, 1, "y");
  ASSERT_EQ(y.shape(), (Shape{1, 10}));

  runtime_test::TempDir dir;
  NamedArrays params;
  for (const Tensor& t : g.tensors())
    if (t.is_weight()) params.push_back({t.name(), t.data()});
  write_npz(dir.file("weights.npz"), params);
  std::ofstream(dir.file("export.py")) << kExportScript;
  const std::string command = "cd '" + dir.path() + "' && /usr/bin/python3 export.py >export.log 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << "see " << dir.file("export.log");

  NDArray input = weights({1, 4, 8, 8}, 9);
  OnnxModel onnx = from_onnx_file(dir.file("block.onnx"));
  std::vector<Value> onnx_args = {Value(input)};
  for (const auto& [name, array] : onnx.params) onnx_args.emplace_back(array);
  NDArray want = interpret(onnx.module, "main", onnx_args).tensor();

  KilnProgram program = to_kiln(g, {x}, {y});
  std::vector<Value> args = {Value(input)};
  for (const auto& [name, array] : program.params) args.emplace_back(array);
  NDArray got = interpret(program.module, "main", args).tensor();

  ASSERT_EQ(got.shape(), want.shape());
  double lo = 1, hi = 0;
  for (int64_t i = 0; i < want.numel(); ++i) lo = std::min(lo, want.at(i)), hi = std::max(hi, want.at(i));
  EXPECT_GT(hi - lo, 1e-3) << "the block's output does not depend on its weights";
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.at(i), want.at(i), 1e-6) << i;
  // The same graph as Top MLIR (parsed by mlir-opt in tests/cli/tpulang_mlir_parses.sh).
  compile(g, "ResNetBlock", {x}, {y}, testing::tpulang::emit_dir());

  // The ONNX model the other way: kiln's program as a TpuLang graph, written as Top MLIR, and
  // back into kiln, still computing the same.
  TopGraph top = from_kiln(onnx.module, onnx.params);
  ASSERT_EQ(top.inputs.size(), 1u);
  ASSERT_EQ(top.outputs.size(), 1u);
  TopModule mlir = emit_top(*top.graph, "ResNetBlockOnnx", top.inputs, top.outputs);
  EXPECT_NE(mlir.mlir.find("\"top.Conv\""), std::string::npos) << mlir.mlir;
  EXPECT_NE(mlir.mlir.find("\"top.MatMul\""), std::string::npos) << mlir.mlir;
  EXPECT_EQ(mlir.weights.size(), onnx.params.size());
  // Each conv's nn.bias_add is its top.Conv's bias, the fc's add its top.MatMul's: the one add
  // left is the shortcut's.
  auto count = [&](const std::string& op) {
    size_t n = 0;
    for (size_t at = mlir.mlir.find(op); at != std::string::npos; at = mlir.mlir.find(op, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"top.Conv\""), 3u);
  EXPECT_EQ(count("\"top.Add\""), 1u);
  EXPECT_EQ(count("\"top.None\""), 0u);
  compile(*top.graph, "ResNetBlockOnnx", top.inputs, top.outputs, testing::tpulang::emit_dir());
  KilnProgram back = to_kiln(*top.graph, top.inputs, top.outputs);
  std::vector<Value> back_args = {Value(input)};
  for (const auto& [name, array] : back.params) back_args.emplace_back(array);
  NDArray round_trip = interpret(back.module, "main", back_args).tensor();
  ASSERT_EQ(round_trip.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(round_trip.at(i), want.at(i), 1e-6) << i;
}

TEST(TpuLangFromKiln, UnsupportedOpsAreNamed) {
  Var x = make_var("x", tensor_type({2, 3}, DType::kFloat32));
  IRModule mod = IRModule::from_function(make_function({x}, call_op("exp", {x})));
  EXPECT_NE(error_of([&] { from_kiln(mod); }).find("op 'tpulang.from_kiln': no TpuLang op for exp"), std::string::npos);
  Var wide = make_var("wide", tensor_type({2}, DType::kFloat64));
  IRModule f64 = IRModule::from_function(make_function({wide}, call_op("nn.relu", {wide})));
  EXPECT_NE(error_of([&] { from_kiln(f64); }).find("'wide' is float64"), std::string::npos);
}

}  // namespace
}  // namespace kiln::tpulang
