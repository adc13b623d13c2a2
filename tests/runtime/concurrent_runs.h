// Many threads, each with its own executor of one shared artifact, each running it many times
// on inputs of its own: every output must be bit-identical to what a single executor computed
// for that input alone. Used on a model compiled in-process (tests/backend) and, under
// ThreadSanitizer, on an artifact the release kiln compiled (tests/tsan).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "kiln/runtime/graph_executor.h"

namespace kiln::runtime_test {

struct ConcurrentRuns {
  int threads = 8;
  int runs_per_thread = 1000;
  int distinct_inputs = 4;  // each thread cycles through these, out of step with the others
};

inline NDArray random_float_tensor(const TensorInfo& info, unsigned seed) {
  NDArray tensor = NDArray::empty(info.shape, info.dtype);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t i = 0; i < tensor.numel(); ++i) tensor.set(i, dist(gen));
  return tensor;
}

// Input set `which` of the artifact: one random tensor per input.
inline std::vector<NDArray> input_set(const Artifact& artifact, int which) {
  std::vector<NDArray> set;
  for (const TensorInfo& info : artifact.inputs())
    set.push_back(random_float_tensor(info, static_cast<unsigned>(100 + which * 17 + set.size())));
  return set;
}

inline std::vector<NDArray> run_once(GraphExecutor& executor, const std::vector<NDArray>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(i, inputs[i]);
  executor.run();
  std::vector<NDArray> outputs;
  for (size_t i = 0; i < executor.num_outputs(); ++i) outputs.push_back(executor.get_output(i));
  return outputs;
}

inline bool same_outputs(const std::vector<NDArray>& a, const std::vector<NDArray>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].same_as(b[i])) return false;
  return true;
}

inline void expect_concurrent_runs_bit_identical(const std::shared_ptr<const Artifact>& artifact,
                                                 const ConcurrentRuns& plan = {}) {
  std::vector<std::vector<NDArray>> inputs, expected;
  GraphExecutor alone(artifact, 1);
  for (int i = 0; i < plan.distinct_inputs; ++i) {
    inputs.push_back(input_set(*artifact, i));
    expected.push_back(run_once(alone, inputs.back()));
  }
  ASSERT_FALSE(same_outputs(expected[0], expected[1])) << "distinct inputs must give distinct outputs";

  std::vector<int> mismatches(static_cast<size_t>(plan.threads), -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < plan.threads; ++t)
    threads.emplace_back([&, t] {
      GraphExecutor executor(artifact, 1 + t % 2);  // half of them split kernels over a pool
      int bad = 0;
      for (int run = 0; run < plan.runs_per_thread; ++run) {
        const size_t which = static_cast<size_t>((run + t) % plan.distinct_inputs);
        if (!same_outputs(run_once(executor, inputs[which]), expected[which])) ++bad;
      }
      mismatches[static_cast<size_t>(t)] = bad;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(static_cast<size_t>(plan.threads), 0));
}

}  // namespace kiln::runtime_test
