// A fixed set of worker threads owned by one graph executor. parallel_for hands out tasks
// to the workers and to the calling thread; a parallel_for issued from inside a task (by a
// worker or by the caller) runs inline, so nested parallel loops never deadlock.
//
// Dispatch costs microseconds: the caller publishes a loop in one atomic word (generation and
// the range of unclaimed tasks) without a mutex; idle workers spin on it for a short while (kSpin) before
// sleeping on a condition variable, which the caller only signals when someone sleeps, so
// loops issued back to back by a graph executor find the workers awake. Threads claim chunks
// of tasks from that word (the caller from its front, workers from its back, so that each
// thread's tasks are contiguous), and the caller waits only for chunks claimed, never for a worker
// that has not woken up yet (which matters on a loaded machine).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/runtime/kernel_abi.h"

namespace kiln {

class ThreadPool {
 public:
  // A task returns 0 on success; a non-zero status or an exception fails the loop.
  using Task = std::function<int32_t(int64_t task)>;

  // `num_threads` counts the calling thread, so 1 means no worker threads. Values below 1
  // mean "one per hardware thread".
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // How long an idle worker polls for the next loop before it sleeps: long enough to bridge
  // the gap between two kernels of one run, short enough not to burn a core between runs.
  static constexpr std::chrono::microseconds kSpin{100};

  // Runs body(task) for every task in [0, num_tasks). Every task runs even when one fails;
  // afterwards the exception of the lowest failing task is rethrown.
  void parallel_for(int64_t num_tasks, const std::function<void(int64_t task)>& body);
  // Same, for status-returning tasks: returns the status of the lowest failing task, or 0.
  // Exceptions are rethrown as in parallel_for.
  int32_t parallel_for_status(int64_t num_tasks, const Task& body);

  // The pool of the executor running on this thread (nullptr outside of any run), which the
  // kernel ABI's parallel_for uses.
  static ThreadPool* current();

  // Makes `pool` the current pool of this thread for the scope's lifetime.
  class Scope {
   public:
    explicit Scope(ThreadPool* pool);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadPool* previous_;
  };

 private:
  struct Failure;
  struct Loop;
  void worker_loop();
  // Spins, then sleeps, until a loop of another generation than `seen` is published or the
  // pool stops; returns the generation seen last.
  uint32_t wait_for_loop(uint32_t seen);
  // Runs chunks of the published loop of generation `generation` until none is left, taking
  // them from the front of the unclaimed tasks (the caller) or from the back (workers).
  void run_chunks(uint32_t generation, bool from_back);
  void wake_sleepers();
  void stop_workers();

  std::vector<std::thread> workers_;
  std::unique_ptr<Loop> loop_;
  std::atomic<bool> busy_{false};  // a loop is in flight; a concurrent caller runs inline
  uint32_t generation_ = 0;        // of the last loop published, written under busy_
  std::atomic<int> sleeping_{0};   // workers blocked (or about to block) on wake_
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;  // only for sleeping and waking
  std::condition_variable wake_;
};

// The table installed into every loaded lib.so: parallel_for runs on ThreadPool::current()
// (inline when there is none), workspace_alloc / workspace_free are runtime/workspace.h's.
const KilnRuntimeApi* kiln_runtime_api_table();

}  // namespace kiln
