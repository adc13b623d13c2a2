// Helpers of the end-to-end tests of blocked convolutions: a module built at opt level 3 with
// AlterOpLayout forced, run as an artifact on an executor of several threads, and compared
// with the interpreter's result element by element.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "kiln/backend/build.h"
#include "kiln/runtime/graph_executor.h"
#include "runtime/runtime_test_util.h"

namespace kiln::testing {

// Opt level 3 with every convolution blocked.
inline BuildOptions blocked_build_options() {
  BuildOptions options;
  options.passes.opt_level = 3;
  options.passes.options["AlterOpLayout"].set("force", AttrValue(true));
  return options;
}

// `mod`'s @main(%x, ...) built with `options`; its one output named "y".
inline BuiltModel build_blocked(const IRModule& mod, const BuildOptions& options = blocked_build_options()) {
  return build(mod, {}, {"x"}, {"y"}, options);
}

// `built` written as an artifact, loaded and run on `threads` threads with x bound: output 0.
inline NDArray run_artifact(const BuiltModel& built, const NDArray& x, size_t threads) {
  runtime_test::TempDir dir;
  write_artifact(built, dir.file("m.kiln"));
  GraphExecutor executor(Artifact::load(dir.file("m.kiln")), threads);
  executor.set_input("x", x);
  executor.run();
  return executor.get_output(0);
}

// Fails for every element farther than atol + rtol * |want| from `want`, naming the first five.
inline void expect_all_close(const NDArray& got, const NDArray& want, double atol, double rtol) {
  ASSERT_EQ(got.shape(), want.shape());
  int64_t bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::fabs(got.at(i) - want.at(i)) > atol + rtol * std::fabs(want.at(i)) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": want " << want.at(i) << ", got " << got.at(i);
}

}  // namespace kiln::testing
