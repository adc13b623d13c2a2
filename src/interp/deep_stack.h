// Interpreted programs may nest deeper than the C++ stack allows: a loop written as a
// recursive function nests as deep as it iterates. DeepStack counts the interpreter's
// nesting levels and, every so many, continues on a fresh thread with a large stack
// (waiting for it), so the depth is bounded by memory rather than by the stack size.
#pragma once

#include <cstddef>
#include <exception>
#include <utility>

namespace kiln::interp {

class DeepStack {
 public:
  // Returns fn() evaluated one nesting level deeper.
  template <class Fn>
  auto nested(Fn&& fn) -> decltype(fn()) {
    if (depth_ - segment_start_ < segment_levels_) {
      Level level(depth_);
      return fn();
    }
    decltype(fn()) result;
    std::exception_ptr error;
    Segment segment(*this);
    run_on_fresh_stack([&] {
      try {
        Level level(depth_);
        result = fn();
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (error) std::rethrow_exception(error);
    return result;
  }

 private:
  // The caller's stack is of unknown size and partly used: take few levels on it.
  static constexpr size_t kFirstSegmentLevels = 128;
  static constexpr size_t kLevelsPerSegment = 4096;

  struct Level {
    explicit Level(size_t& depth) : depth_(depth) { ++depth_; }
    ~Level() { --depth_; }
    size_t& depth_;
  };
  // Starts a new segment at the current depth; restores the previous one afterwards.
  struct Segment {
    explicit Segment(DeepStack& s) : s_(s), start_(s.segment_start_), levels_(s.segment_levels_) {
      s.segment_start_ = s.depth_;
      s.segment_levels_ = kLevelsPerSegment;
    }
    ~Segment() {
      s_.segment_start_ = start_;
      s_.segment_levels_ = levels_;
    }
    DeepStack& s_;
    size_t start_, levels_;
  };

  template <class Body>
  static void run_on_fresh_stack(Body&& body) {
    run_on_fresh_stack_impl([](void* b) { (*static_cast<Body*>(b))(); }, &body);
  }
  // Runs task(arg) on a new thread with a large stack and joins it; throws kiln::Error
  // when the thread cannot be created. task must not throw.
  static void run_on_fresh_stack_impl(void (*task)(void*), void* arg);

  size_t depth_ = 0;
  size_t segment_start_ = 0;
  size_t segment_levels_ = kFirstSegmentLevels;
};

}  // namespace kiln::interp
