#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <system_error>

#include "kiln/support/error.h"

namespace kiln {

namespace {

thread_local ThreadPool* current_pool = nullptr;
// True while this thread runs a task of some parallel loop: nested loops then run inline.
thread_local bool inside_task = false;

class InsideTask {
 public:
  InsideTask() : previous_(inside_task) { inside_task = true; }
  ~InsideTask() { inside_task = previous_; }

 private:
  bool previous_;
};

}  // namespace

struct ThreadPool::Job {
  const Task* body = nullptr;
  int64_t num_tasks = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};

  std::mutex failure_mutex;
  int64_t failed_task = std::numeric_limits<int64_t>::max();
  int32_t status = 0;
  std::exception_ptr exception;

  void record(int64_t task, int32_t task_status, std::exception_ptr task_exception) {
    std::lock_guard lock(failure_mutex);
    if (task >= failed_task) return;
    failed_task = task;
    status = task_status;
    exception = std::move(task_exception);
  }
};

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  try {
    for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    // The destructor does not run for a half-built pool: stop the threads already started.
    stop_workers();
    throw Error(cat("cannot start ", num_threads, " threads: ", e.what()));
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::work_on(Job& job) {
  InsideTask inside;
  while (true) {
    const int64_t begin = job.next.fetch_add(job.chunk);
    if (begin >= job.num_tasks) return;
    const int64_t end = std::min(job.num_tasks, begin + job.chunk);
    for (int64_t task = begin; task < end; ++task) {
      try {
        if (int32_t status = (*job.body)(task); status != 0) job.record(task, status, nullptr);
      } catch (...) {
        job.record(task, -1, std::current_exception());
      }
    }
  }
}

void ThreadPool::worker_loop() {
  current_pool = this;
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && job_ != nullptr); });
    if (stopping_) return;
    seen = generation_;
    Job* job = job_;
    ++active_;
    lock.unlock();
    work_on(*job);
    lock.lock();
    if (--active_ == 0) idle_.notify_all();
  }
}

int32_t ThreadPool::parallel_for_status(int64_t num_tasks, const Task& body) {
  if (num_tasks <= 0) return 0;
  Job job;
  job.body = &body;
  job.num_tasks = num_tasks;
  const bool run_inline = inside_task || workers_.empty() || num_tasks == 1;
  if (run_inline) {
    job.chunk = num_tasks;
    work_on(job);
  } else {
    // A few chunks per thread balance uneven tasks without paying an atomic per task.
    job.chunk = std::max<int64_t>(1, num_tasks / (int64_t{num_threads()} * 4));
    std::lock_guard dispatch(dispatch_mutex_);
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    work_on(job);
    std::unique_lock lock(mutex_);
    job_ = nullptr;  // workers that wake from now on skip this loop
    idle_.wait(lock, [&] { return active_ == 0; });
  }
  if (job.exception) std::rethrow_exception(job.exception);
  return job.status;
}

void ThreadPool::parallel_for(int64_t num_tasks, const std::function<void(int64_t task)>& body) {
  parallel_for_status(num_tasks, [&](int64_t task) {
    body(task);
    return 0;
  });
}

ThreadPool* ThreadPool::current() { return current_pool; }

ThreadPool::Scope::Scope(ThreadPool* pool) : previous_(current_pool) { current_pool = pool; }
ThreadPool::Scope::~Scope() { current_pool = previous_; }

namespace {

int32_t api_parallel_for(int64_t num_tasks, kiln_parallel_body body, void* env) {
  auto run_task = [&](int64_t task) { return body(task, num_tasks, env); };
  // No exception may cross the C frames of lib.so; C tasks throw none, so this only
  // catches failures of the pool itself (e.g. a thread that could not start).
  try {
    if (ThreadPool* pool = ThreadPool::current()) return pool->parallel_for_status(num_tasks, run_task);
    int32_t first_failure = 0;
    for (int64_t task = 0; task < num_tasks; ++task)
      if (int32_t status = run_task(task); status != 0 && first_failure == 0) first_failure = status;
    return first_failure;
  } catch (...) {
    return -1;
  }
}

void* api_workspace_alloc(int64_t nbytes) {
  constexpr size_t kAlignment = 64;
  if (nbytes < 0) return nullptr;
  const size_t rounded = (std::max<size_t>(static_cast<size_t>(nbytes), 1) + kAlignment - 1) / kAlignment * kAlignment;
  return std::aligned_alloc(kAlignment, rounded);
}

void api_workspace_free(void* ptr) { std::free(ptr); }

}  // namespace

const KilnRuntimeApi* kiln_runtime_api_table() {
  static const KilnRuntimeApi table{api_parallel_for, api_workspace_alloc, api_workspace_free};
  return &table;
}

}  // namespace kiln
