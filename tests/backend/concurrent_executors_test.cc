// One loaded artifact serving many threads: the bundled example CNN (convolutions, pooling,
// dense, softmax in generated code) compiled once, then eight threads each run their own
// executor of it a thousand times (tests/runtime/concurrent_runs.h).
#include <gtest/gtest.h>

#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "runtime/concurrent_runs.h"
#include "runtime/runtime_test_util.h"

namespace kiln {
namespace {

using runtime_test::TempDir;

TEST(ConcurrentExecutors, EightThreadsRunningOneCompiledCnnGiveBitIdenticalOutputs) {
  TempDir dir;
  OnnxModel model = from_onnx_file(std::string(KILN_SOURCE_DIR) + "/examples/cnn/model.onnx");
  BuiltModel built = build(model.module, model.params, model.input_names, model.output_names);
  ASSERT_TRUE(built.fallbacks.empty()) << built.fallbacks.front();
  write_artifact(built, dir.file("cnn.kiln"));
  runtime_test::expect_concurrent_runs_bit_identical(Artifact::load(dir.file("cnn.kiln")));
}

}  // namespace
}  // namespace kiln
