#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <system_error>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kiln/support/error.h"
#include "runtime/workspace.h"

namespace kiln {

namespace {

thread_local ThreadPool* current_pool = nullptr;
// True while this thread runs a task of some parallel loop: nested loops then run inline.
thread_local bool inside_task = false;

// Tells the core a spin-wait is in progress, which saves power and lets the sibling
// hyper-thread run.
void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

class InsideTask {
 public:
  InsideTask() : previous_(inside_task) { inside_task = true; }
  ~InsideTask() { inside_task = previous_; }

 private:
  bool previous_;
};

}  // namespace

// The failure of the lowest failing task of one loop.
struct ThreadPool::Failure {
  std::mutex mutex;
  int64_t task = std::numeric_limits<int64_t>::max();
  int32_t status = 0;
  std::exception_ptr exception;

  void reset() {
    task = std::numeric_limits<int64_t>::max();
    status = 0;
    exception = nullptr;
  }
  void record(int64_t failed_task, int32_t task_status, std::exception_ptr task_exception) {
    std::lock_guard lock(mutex);
    if (failed_task >= task) return;
    task = failed_task;
    status = task_status;
    exception = std::move(task_exception);
  }
  // Runs tasks [begin, end) of `body`, recording failures.
  void run(const Task& body, int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      try {
        if (int32_t task_status = body(t); task_status != 0) record(t, task_status, nullptr);
      } catch (...) {
        record(t, -1, std::current_exception());
      }
    }
  }
};

// The loop being run, owned by the pool so that a late worker reads valid memory.
// `state` packs the generation (high 16 bits) and the unclaimed tasks [front, back) (24 bits
// each): a claim is one compare-and-swap that also proves the loop is still the one the
// worker saw, and while any of its tasks is claimed but not done, its caller is still waiting
// in parallel_for, so body and failure are still valid. A stale compare-and-swap can only
// succeed when the word is exactly the live loop's (its generation repeated after 2^16 loops
// and the same range left), and then its claim is a valid claim of that loop.
//
// The caller claims from the front and the workers from the back, so with two threads each
// runs one contiguous part of the tasks, split wherever the two meet. Consecutive kernels
// whose tasks walk the same data in the same order (rows of one layer, then rows of the
// next) then find their half of the data in their own core's cache; handing chunks out from
// one end alternates them between the cores, and every layer reads half its input from the
// other core (3-8% of a 2-thread MobileNet or EfficientNet run on this 2-core host).
struct ThreadPool::Loop {
  static constexpr int kTaskBits = 24, kGenerationBits = 16;
  static constexpr int64_t kMaxTasks = (int64_t{1} << kTaskBits) - 1;
  static constexpr uint32_t kGenerations = uint32_t{1} << kGenerationBits;

  std::atomic<uint64_t> state{0};
  std::atomic<const Task*> body{nullptr};
  std::atomic<int64_t> threads{1};
  std::atomic<int64_t> done{0};  // tasks finished
  Failure failure;

  static uint64_t pack(uint32_t generation, int64_t front, int64_t back) {
    return (uint64_t{generation} << (2 * kTaskBits)) | (static_cast<uint64_t>(back) << kTaskBits) |
           static_cast<uint64_t>(front);
  }
  static uint32_t generation_of(uint64_t packed) { return static_cast<uint32_t>(packed >> (2 * kTaskBits)); }
  static int64_t front_of(uint64_t packed) { return static_cast<int64_t>(packed & kMaxTasks); }
  static int64_t back_of(uint64_t packed) { return static_cast<int64_t>((packed >> kTaskBits) & kMaxTasks); }
};

ThreadPool::ThreadPool(int num_threads) : loop_(std::make_unique<Loop>()) {
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

void ThreadPool::wake_sleepers() {
  // A sleeper counts itself before its last look at the state, and the mutex orders this
  // wake-up after that look: no wake-up is lost.
  if (sleeping_.load() == 0) return;
  { std::lock_guard lock(mutex_); }
  wake_.notify_all();
}

void ThreadPool::stop_workers() {
  stopping_.store(true);
  { std::lock_guard lock(mutex_); }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ThreadPool::run_chunks(uint32_t generation, bool from_back) {
  InsideTask inside;
  Loop& loop = *loop_;
  uint64_t state = loop.state.load(std::memory_order_acquire);
  while (true) {
    if (Loop::generation_of(state) != generation) return;
    const int64_t front = Loop::front_of(state), back = Loop::back_of(state);
    if (front >= back) return;
    // Guided chunks: large ones first for few atomics, small ones last so that no thread
    // idles long while another finishes a big chunk.
    const int64_t threads = loop.threads.load(std::memory_order_relaxed), left = back - front;
    const int64_t size = threads == 1 ? left : std::max<int64_t>(1, left / (2 * threads));
    const int64_t begin = from_back ? back - size : front, end = from_back ? back : front + size;
    const uint64_t next = Loop::pack(generation, from_back ? front : end, from_back ? begin : back);
    if (!loop.state.compare_exchange_weak(state, next, std::memory_order_acq_rel)) continue;
    loop.failure.run(*loop.body.load(std::memory_order_relaxed), begin, end);
    loop.done.fetch_add(end - begin, std::memory_order_acq_rel);
    state = loop.state.load(std::memory_order_acquire);
  }
}

uint32_t ThreadPool::wait_for_loop(uint32_t seen) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (uint32_t round = 1;; ++round) {
    const uint32_t generation = Loop::generation_of(loop_->state.load(std::memory_order_acquire));
    if (generation != seen || stopping_.load(std::memory_order_relaxed)) return generation;
    // Pausing first reacts fastest; yielding later hands the core back when the machine is
    // oversubscribed, where this worker may share a core with the thread that will wake it.
    if (round < 256)
      cpu_relax();
    else
      std::this_thread::yield();
    if (round % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
  }
  std::unique_lock lock(mutex_);
  sleeping_.fetch_add(1);
  uint32_t generation = seen;
  wake_.wait(lock, [&] {
    generation = Loop::generation_of(loop_->state.load());
    return generation != seen || stopping_.load();
  });
  sleeping_.fetch_sub(1);
  return generation;
}

void ThreadPool::worker_loop() {
  current_pool = this;
  uint32_t seen = 0;
  while (true) {
    seen = wait_for_loop(seen);
    if (stopping_.load()) return;
    run_chunks(seen, true);
  }
}

int32_t ThreadPool::parallel_for_status(int64_t num_tasks, const Task& body) {
  if (num_tasks <= 0) return 0;
  // A loop issued while another one of this pool is in flight (another thread sharing the
  // executor) runs inline rather than queueing behind it.
  const bool run_inline = inside_task || workers_.empty() || num_tasks == 1 || num_tasks > Loop::kMaxTasks ||
                          busy_.exchange(true, std::memory_order_acquire);
  if (run_inline) {
    InsideTask inside;
    Failure failure;
    failure.run(body, 0, num_tasks);
    if (failure.exception) std::rethrow_exception(failure.exception);
    return failure.status;
  }
  Loop& loop = *loop_;
  loop.body.store(&body, std::memory_order_relaxed);
  loop.threads.store(num_threads(), std::memory_order_relaxed);
  loop.done.store(0, std::memory_order_relaxed);
  loop.failure.reset();
  // Generation 0 is the one workers start having seen; skip it when the counter wraps.
  generation_ = (generation_ + 1) % Loop::kGenerations;
  if (generation_ == 0) generation_ = 1;
  loop.state.store(Loop::pack(generation_, 0, num_tasks));  // publishes everything above
  wake_sleepers();
  run_chunks(generation_, false);
  for (uint32_t round = 1; loop.done.load(std::memory_order_acquire) != num_tasks; ++round) {
    // A worker preempted mid-chunk may take a while: stop spinning on a shared machine.
    if (round % 1024 == 0)
      std::this_thread::yield();
    else
      cpu_relax();
  }
  // Every task done means every task claimed: the state's range is empty, and a worker still
  // holding this loop's word can claim nothing.
  std::exception_ptr exception = std::move(loop.failure.exception);
  const int32_t status = loop.failure.status;
  busy_.store(false, std::memory_order_release);
  if (exception) std::rethrow_exception(exception);
  return status;
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

}  // namespace

const KilnRuntimeApi* kiln_runtime_api_table() {
  static const KilnRuntimeApi table{api_parallel_for, workspace_alloc, workspace_free};
  return &table;
}

}  // namespace kiln
