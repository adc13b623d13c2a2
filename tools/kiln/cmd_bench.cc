// kiln bench MODEL|OUT.kiln [--threads N] [--warmup N] [--repeat N] [--profile]: times
// GraphExecutor::run on random (or --inputs) tensors; the last line is "median_ms=… min_ms=…".
// --profile first prints where a run spends its time, by function.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "cli.h"
#include "compiled_model.h"
#include "fp32_peak.h"
#include "kiln/support/error.h"

namespace kiln::cli {
namespace {

// The median of `values` (not empty).
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Mean time per run of each function over `repeat` profiled runs, largest first; for functions
// whose flops the compiler counted (products, convolutions, attention), GFLOP/s and its share of
// one core's measured fp32 peak times the threads. The rate is of the function's median run and
// the peak the median of measurements taken between the runs: on a shared host the clock and the
// neighbours' load drift, and a mean over runs would charge a kernel for the slowest of them.
void print_profile(GraphExecutor& executor, int repeat) {
  struct Total {
    double flops = 0;  // of one run
    int calls = 0;
    std::vector<double> run_ms;  // per profiled run
    double mean_ms = 0;          // over the runs, once they are done
  };
  constexpr int kPeakSamples = 5;
  std::map<std::string, Total> totals;
  std::vector<double> peaks;
  for (int r = 0; r < repeat; ++r) {
    if (r % std::max(1, repeat / kPeakSamples) == 0) peaks.push_back(measure_fp32_peak_gflops(0.02));
    std::map<std::string, double> run_ms;
    for (const GraphExecutor::StepTime& t : executor.run_profiled()) {
      run_ms[t.function] += t.ms;
      if (r == 0) {
        ++totals[t.function].calls;
        totals[t.function].flops += t.flops;
      }
    }
    for (const auto& [function, ms] : run_ms) totals[function].run_ms.push_back(ms);
  }
  double all = 0;
  for (auto& [function, total] : totals) {
    total.mean_ms = std::accumulate(total.run_ms.begin(), total.run_ms.end(), 0.0) / repeat;
    all += total.mean_ms;
  }
  std::vector<std::pair<std::string, Total>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.mean_ms > b.second.mean_ms; });
  const double peak = median_of(peaks) * executor.num_threads();
  std::printf("fp32 peak (measured, %d thread%s): %.1f GFLOP/s\n", executor.num_threads(),
              executor.num_threads() == 1 ? "" : "s", peak);
  std::printf("%10s %6s %6s %8s %6s  %s\n", "ms/run", "share", "calls", "GFLOP/s", "peak", "function");
  for (const auto& [function, total] : rows) {
    const double median_ms = median_of(total.run_ms);
    const double gflops = median_ms > 0 ? total.flops / (median_ms * 1e6) : 0;
    std::printf("%10.4f %5.1f%% %6d ", total.mean_ms, all > 0 ? 100 * total.mean_ms / all : 0.0, total.calls);
    if (total.flops > 0)
      std::printf("%8.1f %5.1f%%", gflops, 100 * gflops / peak);
    else
      std::printf("%8s %6s", "-", "-");
    std::printf("  %s\n", function.c_str());
  }
}

}  // namespace

int cmd_bench(const Args& args) {
  check(args.positionals().size() == 1, "bench takes one model file or artifact");
  const int warmup = args.get_int("--warmup", 5), repeat = args.get_int("--repeat", 20);
  check(warmup >= 0 && repeat >= 1, "--warmup must be at least 0 and --repeat at least 1");
  auto compile_start = std::chrono::steady_clock::now();
  PreparedRun prepared = prepare_run(args.positionals()[0], args, /*random_by_default=*/true);
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  GraphExecutor executor(prepared.artifact, args.get_int("--threads", 1));
  for (size_t i = 0; i < prepared.inputs.size(); ++i) executor.set_input(i, prepared.inputs[i]);
  for (int i = 0; i < warmup; ++i) executor.run();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    executor.run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  if (args.has("--profile")) print_profile(executor, repeat);
  std::printf("threads=%d warmup=%d repeat=%d load_or_compile_s=%.3f\n", executor.num_threads(), warmup, repeat,
              load_s);
  std::printf("median_ms=%.4f min_ms=%.4f\n", median_of(ms), *std::min_element(ms.begin(), ms.end()));
  return 0;
}

}  // namespace kiln::cli
