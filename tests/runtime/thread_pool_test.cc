#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kiln/support/error.h"
#include "runtime/workspace.h"

namespace kiln {
namespace {

// Waits (up to a few seconds) until `count` reaches `target`; true when it did.
bool wait_for(const std::atomic<int>& count, int target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count.load() < target)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t task) { runs[static_cast<size_t>(task)]++; });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "n=" << n << " task " << i;
  }
}

TEST(ThreadPool, CallerAndWorkersRunTasksAtTheSameTime) {
  ThreadPool pool(3);
  std::atomic<int> started{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  bool all_met = true;
  // Every task waits for all three: this only finishes when three threads run tasks at once.
  pool.parallel_for(3, [&](int64_t) {
    started++;
    const bool met = wait_for(started, 3);
    std::lock_guard lock(mutex);
    all_met = all_met && met;
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_TRUE(all_met);
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_TRUE(threads.count(std::this_thread::get_id())) << "the calling thread takes part";
}

TEST(ThreadPool, OneThreadRunsInlineOnTheCaller) {
  ThreadPool pool(1);
  std::vector<std::thread::id> seen;
  pool.parallel_for(4, [&](int64_t) { seen.push_back(std::this_thread::get_id()); });
  ASSERT_EQ(seen.size(), 4u);
  for (auto id : seen) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(ThreadPool, NestedLoopsRunInlineOnTheTaskThread) {
  ThreadPool pool(4);
  std::atomic<int> inner_runs{0}, inner_on_other_thread{0};
  pool.parallel_for(8, [&](int64_t) {
    const auto outer_thread = std::this_thread::get_id();
    pool.parallel_for(5, [&](int64_t) {
      inner_runs++;
      if (std::this_thread::get_id() != outer_thread) inner_on_other_thread++;
    });
  });
  EXPECT_EQ(inner_runs.load(), 40);
  EXPECT_EQ(inner_on_other_thread.load(), 0);
}

TEST(ThreadPool, RethrowsTheExceptionOfTheLowestFailingTaskAfterRunningAll) {
  ThreadPool pool(4);
  std::atomic<int> runs{0};
  try {
    pool.parallel_for(100, [&](int64_t task) {
      runs++;
      if (task == 17 || task == 60) throw Error(cat("task ", task, " failed"));
    });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "task 17 failed");
  }
  EXPECT_EQ(runs.load(), 100);
  // The pool stays usable.
  std::atomic<int> after{0};
  pool.parallel_for(10, [&](int64_t) { after++; });
  EXPECT_EQ(after.load(), 10);
}

TEST(ThreadPool, ReturnsTheStatusOfTheLowestFailingTask) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.parallel_for_status(50, [](int64_t task) { return task == 30 ? 5 : task == 40 ? 9 : 0; }), 5);
  EXPECT_EQ(pool.parallel_for_status(50, [](int64_t) { return 0; }), 0);
}

int32_t record_task(int64_t task, int64_t num_tasks, void* env) {
  auto* slots = static_cast<std::vector<int64_t>*>(env);
  (*slots)[static_cast<size_t>(task)] = num_tasks;
  return task == 3 ? 11 : 0;
}

TEST(ThreadPool, KernelApiRunsOnTheCurrentPool) {
  const KilnRuntimeApi* api = kiln_runtime_api_table();
  std::vector<int64_t> slots(6, 0);
  // Outside any executor the loop still runs, inline, every task.
  EXPECT_EQ(ThreadPool::current(), nullptr);
  EXPECT_EQ(api->parallel_for(6, record_task, &slots), 11);
  EXPECT_EQ(slots, std::vector<int64_t>(6, 6));

  ThreadPool pool(2);
  ThreadPool::Scope scope(&pool);
  EXPECT_EQ(ThreadPool::current(), &pool);
  struct Env {
    std::atomic<int> started{0};
    std::atomic<int> met{0};
  } env;
  auto body = [](int64_t, int64_t, void* p) -> int32_t {
    auto* e = static_cast<Env*>(p);
    e->started++;
    if (wait_for(e->started, 2)) e->met++;
    return 0;
  };
  EXPECT_EQ(api->parallel_for(2, body, &env), 0);
  EXPECT_EQ(env.met.load(), 2) << "both tasks ran at once, on the pool's two threads";
}

TEST(ThreadPool, TableHandsOutTheWorkspace) {
  const KilnRuntimeApi* api = kiln_runtime_api_table();
  EXPECT_EQ(api->workspace_alloc, &workspace_alloc);
  EXPECT_EQ(api->workspace_free, &workspace_free);
}

TEST(ThreadPool, SeveralPoolsRunConcurrently) {
  std::vector<std::thread> threads;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      ThreadPool pool(2);
      for (int round = 0; round < 50; ++round) pool.parallel_for(16, [&](int64_t task) { total += task; });
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(total.load(), 4 * 50 * (15 * 16 / 2));
}

TEST(ThreadPool, EveryTaskRunsOnceForManyLoopSizesAndThreadCounts) {
  for (int threads : {2, 3, 5}) {
    ThreadPool pool(threads);
    for (int64_t n = 0; n <= 70; ++n) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      pool.parallel_for(n, [&](int64_t task) { runs[static_cast<size_t>(task)]++; });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(runs[static_cast<size_t>(i)].load(), 1) << "threads=" << threads << " n=" << n << " task " << i;
    }
  }
}

// Consecutive kernels keep their data in one core's cache only when each thread runs one
// contiguous part of the tasks: the caller a prefix, the worker the rest.
TEST(ThreadPool, TwoThreadsSplitTheTasksIntoAPrefixAndASuffix) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int64_t kTasks = 400;
  std::vector<char> on_caller(kTasks);
  pool.parallel_for(kTasks, [&](int64_t task) {
    on_caller[static_cast<size_t>(task)] = std::this_thread::get_id() == caller;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  });
  const auto split = std::find(on_caller.begin(), on_caller.end(), 0);
  EXPECT_GT(split - on_caller.begin(), 0) << "the caller ran no task";
  EXPECT_LT(split - on_caller.begin(), kTasks) << "the worker ran no task";
  EXPECT_EQ(std::count(split, on_caller.end(), 1), 0) << "a caller task after the first worker task";
}

// The loop word holds 16 bits of generation: loops keep running every task after it wraps.
TEST(ThreadPool, EveryTaskRunsAfterTheGenerationWraps) {
  ThreadPool pool(2);
  std::atomic<int64_t> runs{0};
  constexpr int64_t kLoops = (int64_t{1} << 16) + 100;
  for (int64_t loop = 0; loop < kLoops; ++loop) pool.parallel_for(3, [&](int64_t) { runs++; });
  EXPECT_EQ(runs.load(), 3 * kLoops);
}

TEST(ThreadPool, WorkersThatWentToSleepWakeForTheNextLoop) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    // Longer than the spin: the workers are asleep on the condition variable by now.
    std::this_thread::sleep_for(ThreadPool::kSpin * 20);
    std::atomic<int> started{0}, met{0};
    pool.parallel_for(3, [&](int64_t) {
      started++;
      if (wait_for(started, 3)) met++;
    });
    EXPECT_EQ(met.load(), 3) << "round " << round << ": three threads ran tasks at once";
  }
}

TEST(ThreadPool, NestedLoopsInsideWorkerTasksRunEveryInnerTask) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> runs(6 * 7);
  pool.parallel_for(6, [&](int64_t outer) {
    pool.parallel_for(7, [&](int64_t inner) { runs[static_cast<size_t>(outer * 7 + inner)]++; });
    // A nested status loop returns its own failure, not the outer loop's.
    EXPECT_EQ(pool.parallel_for_status(3, [](int64_t task) { return task == 2 ? 4 : 0; }), 4);
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(ThreadPool, ExceptionOfAWorkerTaskIsRethrownOnTheCaller) {
  ThreadPool pool(2);
  std::atomic<int> started{0};
  const auto caller = std::this_thread::get_id();
  try {
    // Both tasks wait for each other, so they run on two threads; the one on the worker throws.
    pool.parallel_for(2, [&](int64_t) {
      started++;
      wait_for(started, 2);
      if (std::this_thread::get_id() != caller) throw std::runtime_error("worker failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker failed");
  }
  // The failure does not leak into the next loop.
  EXPECT_EQ(pool.parallel_for_status(8, [](int64_t) { return 0; }), 0);
}

TEST(ThreadPool, ThreadsSharingOnePoolEachRunTheirWholeLoop) {
  ThreadPool pool(2);
  constexpr int kCallers = 3, kRounds = 200;
  std::vector<std::thread> callers;
  std::vector<int64_t> sums(kCallers, 0);
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        std::atomic<int64_t> sum{0};
        // A loop issued while another caller's is in flight runs inline: never lost, never mixed.
        pool.parallel_for(10 + c, [&](int64_t task) { sum += task; });
        sums[static_cast<size_t>(c)] += sum.load();
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c)
    EXPECT_EQ(sums[static_cast<size_t>(c)], int64_t{kRounds} * (10 + c) * (9 + c) / 2) << "caller " << c;
}

TEST(ThreadPool, DestroyingAPoolStopsSpinningAndSleepingWorkers) {
  for (auto idle : {std::chrono::microseconds(0), ThreadPool::kSpin * 20}) {
    std::atomic<int> runs{0};
    {
      ThreadPool pool(4);
      pool.parallel_for(16, [&](int64_t) { runs++; });
      std::this_thread::sleep_for(idle);
    }
    EXPECT_EQ(runs.load(), 16);
  }
}

}  // namespace
}  // namespace kiln
