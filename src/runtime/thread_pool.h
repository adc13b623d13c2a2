// A fixed set of worker threads owned by one graph executor. parallel_for hands out tasks
// to the workers and to the calling thread; a parallel_for issued from inside a task (by a
// worker or by the caller) runs inline, so nested parallel loops never deadlock.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
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
  struct Job;
  void worker_loop();
  void stop_workers();
  static void work_on(Job& job);

  std::vector<std::thread> workers_;
  std::mutex dispatch_mutex_;  // one loop at a time when several threads share a pool
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  Job* job_ = nullptr;  // the loop workers may join, guarded by mutex_
  uint64_t generation_ = 0;
  int active_ = 0;  // workers inside work_on
  bool stopping_ = false;
};

// The table installed into every loaded lib.so: parallel_for runs on ThreadPool::current()
// (inline when there is none), workspace_alloc gives 64-byte aligned memory.
const KilnRuntimeApi* kiln_runtime_api_table();

}  // namespace kiln
