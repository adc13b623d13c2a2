#include "interp/deep_stack.h"

#include <pthread.h>

#include <cstring>

#include "kiln/support/error.h"

namespace kiln::interp {

namespace {

// Address space only: pages are committed as the stack grows into them.
constexpr size_t kSegmentStackBytes = size_t{256} << 20;

struct Task {
  void (*fn)(void*);
  void* arg;
};

void* run_task(void* p) {
  auto* task = static_cast<Task*>(p);
  task->fn(task->arg);
  return nullptr;
}

}  // namespace

void DeepStack::run_on_fresh_stack_impl(void (*task)(void*), void* arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kSegmentStackBytes);
  Task t{task, arg};
  pthread_t thread;
  int status = pthread_create(&thread, &attr, run_task, &t);
  pthread_attr_destroy(&attr);
  if (status != 0)
    throw Error(
        cat("the program nests too deeply: cannot start a thread for a deeper stack (", std::strerror(status), ")"));
  pthread_join(thread, nullptr);
}

}  // namespace kiln::interp
