// Scratch memory for generated kernels (KilnRuntimeApi::workspace_alloc / workspace_free):
// 64-byte aligned blocks that a thread keeps after they are freed, for its next request that
// fits. Kernels take scratch per call or per task (Winograd's transformed tiles, a few MB per
// task); fresh blocks that large come from mmap, and faulting their pages in cost about a tenth
// of a Winograd layer's time.
#pragma once

#include <cstdint>

namespace kiln {

// `nbytes` (at least 1) of 64-byte aligned memory, or nullptr when out of memory or nbytes < 0.
void* workspace_alloc(int64_t nbytes);
// Returns a block of workspace_alloc (any thread's) to this thread's cache; null is ignored.
void workspace_free(void* ptr);

}  // namespace kiln
