/* The ABI between generated kernels (lib.so) and the kiln runtime. Plain C: the
 * generated kernels.c includes it, and so does the runtime that loads lib.so.
 *
 * Every primitive function is one exported C function taking the data pointers of its
 * tensors, inputs first then outputs; shapes and dtypes are static and baked into the
 * code. It returns 0 on success, non-zero on failure.
 *
 * Parallel loops call back into the runtime through a table of function pointers that the
 * loader installs right after dlopen, so lib.so needs no symbol of the executable. */
#ifndef KILN_RUNTIME_KERNEL_ABI_H_
#define KILN_RUNTIME_KERNEL_ABI_H_

#include <stdint.h>

#define KILN_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* A generated kernel, e.g. int32_t fused_add_exp(void* const* args). */
typedef int32_t (*kiln_kernel_fn)(void* const* args);

/* One task of a parallel loop; returns 0 on success. */
typedef int32_t (*kiln_parallel_body)(int64_t task, int64_t num_tasks, void* env);

typedef struct KilnRuntimeApi {
  /* Runs body for every task in [0, num_tasks) on the calling executor's thread pool (the
   * calling thread takes part; a nested call runs inline). Runs all tasks, returns the first
   * non-zero result or 0. */
  int32_t (*parallel_for)(int64_t num_tasks, kiln_parallel_body body, void* env);
  /* 64-byte aligned scratch for cache_write / large temporaries; NULL when out of memory. */
  void* (*workspace_alloc)(int64_t nbytes);
  void (*workspace_free)(void* ptr);
} KilnRuntimeApi;

/* lib.so defines: const KilnRuntimeApi* kiln_runtime_api;  -- set by the loader.
 * lib.so defines: int32_t kiln_abi_version(void);           -- returns KILN_ABI_VERSION. */
typedef int32_t (*kiln_abi_version_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_KERNEL_ABI_H_ */
