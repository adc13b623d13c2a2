#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Initialised before main(), so the second counts from the command's start.
const Clock::time_point command_start = Clock::now();

// One second, or $KILN_PROGRESS_DELAY_MS (the tests use 0 to see the line on every compile).
Clock::duration delay() {
  const char* ms = std::getenv("KILN_PROGRESS_DELAY_MS");
  return ms && *ms ? std::chrono::milliseconds(std::atoi(ms)) : Clock::duration(std::chrono::seconds(1));
}

// The line shows the latest text; a timer thread draws it when the second is up, because
// the slow step (the C compiler) reports once, when it starts.
class ProgressLine {
 public:
  ~ProgressLine() {
    {
      std::lock_guard lock(mutex_);
      exiting_ = true;
    }
    wake_.notify_all();
    if (timer_.joinable()) timer_.join();
  }

  void show(const std::string& text) {
    if (!terminal_) return;
    std::lock_guard lock(mutex_);
    text_ = text;
    if (Clock::now() - command_start >= delay_) {
      draw();
    } else if (!timer_.joinable()) {
      timer_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        wake_.wait_until(lock, command_start + delay_, [this] { return exiting_; });
        if (!exiting_ && !text_.empty()) draw();
      });
    }
  }

  void clear() {
    std::lock_guard lock(mutex_);
    text_.clear();
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  // \033[K erases what a longer earlier line left.
  void draw() {
    std::fprintf(stderr, "\rkiln: %s\033[K", text_.c_str());
    std::fflush(stderr);
    shown_ = true;
  }

  const bool terminal_ = isatty(STDERR_FILENO) == 1;
  const Clock::duration delay_ = delay();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string text_;
  bool shown_ = false, exiting_ = false;
  std::thread timer_;
};

ProgressLine& line() {
  static ProgressLine l;
  return l;
}

}  // namespace

void show_progress(const std::string& text) { line().show(text); }

void clear_progress() { line().clear(); }

}  // namespace kiln::cli
