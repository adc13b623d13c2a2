#include "runtime/workspace.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>  // its poisoning macros do nothing without AddressSanitizer
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace kiln {

namespace {

constexpr size_t kAlignment = 64;
// The block's capacity is stored in the alignment unit before the pointer handed out.
constexpr size_t kHeader = kAlignment;
// Blocks a thread keeps: enough for the scratch of the few kernels in flight on it.
constexpr size_t kCachedBlocks = 4;

struct Block {
  void* base;
  size_t capacity;  // usable bytes after the header
};

// A kept block is poisoned for AddressSanitizer (the header that records its capacity aside):
// the cache holds on to freed memory, so without this a kernel that used its scratch after
// freeing it would go unnoticed in the sanitized tests. A block handed out is unpoisoned up to
// the request (rounded to the alignment), so a read past it is caught too.
void* usable(void* base) { return static_cast<char*>(base) + kHeader; }
void poison(const Block& b) { ASAN_POISON_MEMORY_REGION(usable(b.base), b.capacity); }
void unpoison(void* base, size_t bytes) { ASAN_UNPOISON_MEMORY_REGION(usable(base), bytes); }

class BlockCache {
 public:
  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache() {
    for (const Block& b : free_) release(b);
  }

  // The smallest kept block of at least `bytes`, taken out of the cache.
  void* take(size_t bytes) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->capacity >= bytes && (best == free_.end() || it->capacity < best->capacity)) best = it;
    if (best == free_.end()) return nullptr;
    void* base = best->base;
    free_.erase(best);
    unpoison(base, bytes);
    return base;
  }

  // Keeps `block`, dropping the oldest one past kCachedBlocks.
  void keep(Block block) {
    poison(block);
    free_.push_back(block);
    if (free_.size() > kCachedBlocks) {
      release(free_.front());
      free_.erase(free_.begin());
    }
  }

 private:
  static void release(const Block& b) {
    unpoison(b.base, b.capacity);
    std::free(b.base);
  }

  std::vector<Block> free_;
};

thread_local BlockCache cache;

size_t& capacity_of(void* base) { return *static_cast<size_t*>(base); }

}  // namespace

void* workspace_alloc(int64_t nbytes) {
  if (nbytes < 0) return nullptr;
  const size_t rounded = (std::max<size_t>(static_cast<size_t>(nbytes), 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* base = cache.take(rounded);
  if (!base) {
    base = std::aligned_alloc(kAlignment, kHeader + rounded);
    if (!base) return nullptr;
    capacity_of(base) = rounded;
  }
  return usable(base);
}

void workspace_free(void* ptr) {
  if (!ptr) return;
  void* base = static_cast<char*>(ptr) - kHeader;
  cache.keep({base, capacity_of(base)});
}

}  // namespace kiln
