#include "runtime/workspace.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_ASAN 1
#endif
#ifdef KILN_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace kiln {
namespace {

TEST(Workspace, BlocksAreAlignedAndUsable) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{1000}, int64_t{3} << 20}) {
    void* p = workspace_alloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    std::memset(p, 1, static_cast<size_t>(n));
    workspace_free(p);
  }
  EXPECT_EQ(workspace_alloc(-1), nullptr);
  workspace_free(nullptr);
}

// Sizes no other test of this process frees on its thread, so the cache holds no other fit.
constexpr int64_t kOddSize = 1234567;

TEST(Workspace, AFreedBlockServesTheNextRequestThatFits) {
  void* big = workspace_alloc(kOddSize);
  workspace_free(big);
  void* again = workspace_alloc(kOddSize - 60);
  EXPECT_EQ(again, big) << "the thread's freed block is reused";
  void* larger = workspace_alloc(kOddSize + 64);
  EXPECT_NE(larger, big) << "a block in use is not handed out twice";
  std::memset(larger, 2, kOddSize + 64);
  workspace_free(again);
  workspace_free(larger);
}

TEST(Workspace, ABlockFreedOnAnotherThreadStaysThere) {
  void* mine = workspace_alloc(kOddSize + 1000);
  void* reused_there = nullptr;
  std::atomic<bool> freed_there{false}, checked_here{false};
  // The other thread stays alive until this one has allocated: its exit frees its cache, and
  // malloc could then hand out the same address again.
  std::thread other([&] {
    workspace_free(mine);
    reused_there = workspace_alloc(kOddSize + 1000);
    workspace_free(reused_there);
    freed_there = true;
    while (!checked_here) std::this_thread::yield();
  });
  while (!freed_there) std::this_thread::yield();
  void* here = workspace_alloc(kOddSize + 1000);
  EXPECT_EQ(reused_there, mine);
  EXPECT_NE(here, mine) << "the block went to the other thread's cache";
  workspace_free(here);
  checked_here = true;
  other.join();
}

// The cache keeps freed blocks allocated; AddressSanitizer still sees them as unusable.
TEST(Workspace, AKeptBlockIsPoisonedUnderAddressSanitizer) {
#ifdef KILN_TEST_ASAN
  constexpr int64_t kSize = kOddSize + 3000;
  char* block = static_cast<char*>(workspace_alloc(kSize));
  EXPECT_FALSE(__asan_address_is_poisoned(block + kSize - 1));
  workspace_free(block);
  EXPECT_TRUE(__asan_address_is_poisoned(block)) << "a use after free would go unnoticed";
  EXPECT_TRUE(__asan_address_is_poisoned(block + kSize - 1));
  char* again = static_cast<char*>(workspace_alloc(kSize - 1000));
  ASSERT_EQ(again, block) << "the kept block is reused";
  EXPECT_FALSE(__asan_address_is_poisoned(again));
  EXPECT_FALSE(__asan_address_is_poisoned(again + kSize - 1001));
  EXPECT_TRUE(__asan_address_is_poisoned(again + kSize - 1)) << "past the request stays poisoned";
  workspace_free(again);
#else
  GTEST_SKIP() << "not built with AddressSanitizer";
#endif
}

}  // namespace
}  // namespace kiln
