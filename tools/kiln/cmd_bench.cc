// kiln bench MODEL|OUT.kiln [--threads N] [--warmup N] [--repeat N]: times GraphExecutor::run
// on random (or --inputs) tensors; the last line is "median_ms=… min_ms=…".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/support/error.h"

namespace kiln::cli {

int cmd_bench(const Args& args) {
  check(args.positionals().size() == 1, "bench takes one model file or artifact");
  const int warmup = args.get_int("--warmup", 5), repeat = args.get_int("--repeat", 20);
  check(warmup >= 0 && repeat >= 1, "--warmup must be at least 0 and --repeat at least 1");
  auto compile_start = std::chrono::steady_clock::now();
  std::shared_ptr<const Artifact> artifact = load_or_compile(args.positionals()[0], args);
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  GraphExecutor executor(artifact, args.get_int("--threads", 1));
  std::vector<NDArray> inputs = read_inputs(artifact->inputs(), args, /*random_by_default=*/true);
  for (size_t i = 0; i < inputs.size(); ++i) executor.set_input(i, inputs[i]);
  for (int i = 0; i < warmup; ++i) executor.run();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    executor.run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  std::printf("threads=%d warmup=%d repeat=%d load_or_compile_s=%.3f\n", executor.num_threads(), warmup, repeat,
              load_s);
  std::printf("median_ms=%.4f min_ms=%.4f\n", median, ms.front());
  return 0;
}

}  // namespace kiln::cli
