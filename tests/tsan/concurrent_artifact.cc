// Under ThreadSanitizer: eight threads running their own executors of one artifact compiled by a
// release kiln (tests/tsan/concurrent_compiled_artifact.sh passes its folder), a thousand runs each.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/concurrent_runs.h"

namespace kiln {
namespace {

TEST(ConcurrentArtifact, EightThreadsRunningOneArtifactGiveBitIdenticalOutputs) {
  const char* dir = std::getenv("KILN_CONCURRENT_ARTIFACT");
  ASSERT_NE(dir, nullptr) << "set KILN_CONCURRENT_ARTIFACT to a compiled artifact's folder";
  runtime_test::expect_concurrent_runs_bit_identical(Artifact::load(dir));
}

}  // namespace
}  // namespace kiln
