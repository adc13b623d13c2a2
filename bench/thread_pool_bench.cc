// Micro-benchmark of kiln's thread pool: what one parallel_for costs the caller beyond its
// tasks' own work, i.e. the dispatch and join overhead every parallel kernel pays. Empty
// tasks show the fast path; tasks of 1 us show whether the workers really share the work.
// usage: thread_pool_bench [SAMPLES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

void busy_wait(std::chrono::nanoseconds duration) {
  const auto until = Clock::now() + duration;
  while (Clock::now() < until) {
  }
}

struct Case {
  int64_t tasks;
  std::chrono::nanoseconds task_work;
  std::chrono::microseconds gap;  // idle time before each loop, as between two kernels
};

// Median and minimum microseconds per loop over `samples` samples of 100 loops.
std::pair<double, double> time_case(kiln::ThreadPool& pool, const Case& c, int samples) {
  constexpr int kLoopsPerSample = 100;
  std::vector<double> per_loop;
  for (int s = 0; s < samples; ++s) {
    double total = 0;
    for (int i = 0; i < kLoopsPerSample; ++i) {
      busy_wait(c.gap);
      const auto start = Clock::now();
      pool.parallel_for(c.tasks, [&](int64_t) { busy_wait(c.task_work); });
      total += std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    }
    per_loop.push_back(total / kLoopsPerSample);
  }
  std::sort(per_loop.begin(), per_loop.end());
  return {per_loop[per_loop.size() / 2], per_loop.front()};
}

}  // namespace

int main(int argc, char** argv) {
  using std::chrono::microseconds, std::chrono::nanoseconds;
  const int samples = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  std::printf(
      "parallel_for: us per loop (median / min of %d samples of 100 loops); overhead = median - "
      "tasks*work/threads\n",
      samples);
  const std::vector<Case> cases{{2, nanoseconds(0), microseconds(0)},      {64, nanoseconds(0), microseconds(0)},
                                {2, nanoseconds(0), microseconds(500)},    {64, nanoseconds(1000), microseconds(0)},
                                {64, nanoseconds(1000), microseconds(20)}, {64, nanoseconds(1000), microseconds(500)}};
  for (int threads : {1, 2}) {
    kiln::ThreadPool pool(threads);
    for (const Case& c : cases) {
      const auto [median, min] = time_case(pool, c, samples);
      const double ideal = static_cast<double>(c.tasks) * static_cast<double>(c.task_work.count()) / 1000.0 / threads;
      std::printf("threads=%d tasks=%-3lld work=%4lldns gap=%3lldus  median=%8.3f  min=%8.3f  overhead=%7.3f\n",
                  threads, static_cast<long long>(c.tasks), static_cast<long long>(c.task_work.count()),
                  static_cast<long long>(c.gap.count()), median, min, median - ideal);
    }
  }
  return 0;
}
