// Real exports through Top MLIR: torchvision's ResNet-18, MobileNetV2, EfficientNet-B0 and
// RegNetY-400MF (random weights, exported by tests/realmodels/export_models.py) imported by
// kiln, turned into a TpuLang graph, written as Top MLIR + weights (parsed by mlir-opt in
// tests/cli/tpulang_mlir_parses.sh), read back from those files and converted into kiln give
// the outputs of the direct ONNX path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/npy.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/from_kiln.h"
#include "kiln/tpulang/read_top.h"
#include "kiln/tpulang/to_kiln.h"
#include "runtime/runtime_test_util.h"
#include "tpulang/tpulang_test_util.h"

namespace kiln::tpulang {
namespace {

NDArray run(const IRModule& module, const NDArray& input, const NamedArrays& params) {
  std::vector<Value> args = {Value(input)};
  for (const auto& [name, array] : params) args.emplace_back(array);
  return interpret(module, "main", args).tensor();
}

void expect_round_trip(const std::string& model) {
  runtime_test::TempDir dir;
  const std::string command = "/usr/bin/python3 '" + std::string(KILN_SOURCE_DIR) +
                              "/tests/realmodels/export_models.py' '" + dir.path() + "' " + model + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  OnnxModel onnx = from_onnx_file(dir.file(model + "/model.onnx"));
  NDArray input = read_npy(dir.file(model + "/inputs/input.npy"));
  NDArray want = run(onnx.module, input, onnx.params);

  TopGraph top = from_kiln(onnx.module, onnx.params);
  CompiledFiles files = compile(*top.graph, model, top.inputs, top.outputs, testing::tpulang::emit_dir());
  EXPECT_EQ(read_npz(files.weight_path).size(), onnx.params.size());
  // Back through the written files, as `kiln run NAME_origin.mlir` reads them.
  TopGraph read = read_top_file(files.mlir_path);
  KilnProgram back = to_kiln(*read.graph, read.inputs, read.outputs);
  NDArray got = run(back.module, input, back.params);
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.at(i), want.at(i), 1e-4 + 1e-4 * std::fabs(want.at(i))) << i;
}

TEST(TpuLangRealModels, ResNet18RoundTripsThroughTopMlir) { expect_round_trip("resnet18"); }

TEST(TpuLangRealModels, MobileNetV2RoundTripsThroughTopMlir) { expect_round_trip("mobilenet_v2"); }

TEST(TpuLangRealModels, EfficientNetB0RoundTripsThroughTopMlir) { expect_round_trip("efficientnet_b0"); }

TEST(TpuLangRealModels, RegNetY400mfRoundTripsThroughTopMlir) { expect_round_trip("regnet_y_400mf"); }

}  // namespace
}  // namespace kiln::tpulang
