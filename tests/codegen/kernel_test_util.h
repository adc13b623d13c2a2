// Loads a generated lib.so the way the runtime's loader does (dlopen, check the ABI version,
// install a KilnRuntimeApi table), with a serial parallel_for that counts its calls; compiles the
// libraries of micro-kernel tests as generated code is compiled.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kiln/codegen/c_compiler.h"
#include "kiln/runtime/kernel_abi.h"

namespace kiln::testing {

struct SerialRuntimeStats {
  int parallel_calls = 0;
  int64_t parallel_tasks = 0;
  int workspace_allocs = 0;
  int workspace_frees = 0;
};

inline SerialRuntimeStats& serial_runtime_stats() {
  static SerialRuntimeStats stats;
  return stats;
}

inline int32_t serial_parallel_for(int64_t num_tasks, kiln_parallel_body body, void* env) {
  ++serial_runtime_stats().parallel_calls;
  int32_t first_error = 0;
  for (int64_t task = 0; task < num_tasks; ++task) {
    ++serial_runtime_stats().parallel_tasks;
    int32_t rc = body(task, num_tasks, env);
    if (rc != 0 && first_error == 0) first_error = rc;
  }
  return first_error;
}

inline void* serial_workspace_alloc(int64_t nbytes) {
  ++serial_runtime_stats().workspace_allocs;
  size_t size = (static_cast<size_t>(nbytes) + 63) / 64 * 64;
  return std::aligned_alloc(64, size == 0 ? 64 : size);
}

inline void serial_workspace_free(void* ptr) {
  ++serial_runtime_stats().workspace_frees;
  std::free(ptr);
}

inline const KilnRuntimeApi* serial_runtime_api() {
  static const KilnRuntimeApi api = {serial_parallel_for, serial_workspace_alloc, serial_workspace_free};
  return &api;
}

class LoadedKernels {
 public:
  explicit LoadedKernels(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      ADD_FAILURE() << "dlopen " << path << ": " << dlerror();
      return;
    }
    auto version = reinterpret_cast<kiln_abi_version_fn>(dlsym(handle_, "kiln_abi_version"));
    auto** api = static_cast<const KilnRuntimeApi**>(dlsym(handle_, "kiln_runtime_api"));
    if (!version || !api) {
      ADD_FAILURE() << path << " lacks kiln_abi_version or kiln_runtime_api";
      return;
    }
    EXPECT_EQ(version(), KILN_ABI_VERSION);
    *api = serial_runtime_api();
  }
  ~LoadedKernels() {
    if (handle_) dlclose(handle_);
  }
  LoadedKernels(const LoadedKernels&) = delete;
  LoadedKernels& operator=(const LoadedKernels&) = delete;

  // Runs kernel `name`; returns its status (-100 when it cannot be found).
  int32_t call(const std::string& name, std::vector<void*> args) const {
    if (!handle_) return -100;
    auto fn = reinterpret_cast<kiln_kernel_fn>(dlsym(handle_, name.c_str()));
    if (!fn) {
      ADD_FAILURE() << "no function " << name;
      return -100;
    }
    return fn(args.data());
  }

 private:
  void* handle_ = nullptr;
};

// The start of a library of micro-kernel test functions: the headers and the two definitions
// LoadedKernels looks for.
inline constexpr const char* kMicrokernelPreamble = R"(#include <stdint.h>
#include "kiln/runtime/kernel_abi.h"
#include "kiln/runtime/microkernels.h"
const KilnRuntimeApi* kiln_runtime_api = 0;
int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }
)";

// A kernel cache of its own under a fresh temporary folder, removed with it: test libraries
// compiled by CCompiler with the flags generated code gets.
class TestKernelCache {
 public:
  TestKernelCache() {
    std::string pattern = ::testing::TempDir() + "kiln_test_kernels_XXXXXX";
    if (mkdtemp(pattern.data())) dir_ = pattern;
  }
  ~TestKernelCache() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TestKernelCache(const TestKernelCache&) = delete;
  TestKernelCache& operator=(const TestKernelCache&) = delete;

  // lib.so of `source`; `march`, when given, replaces -march=native.
  std::string compile(const std::string& source, const std::string& march = "") const {
    EXPECT_FALSE(dir_.empty()) << "no temporary folder for the kernel cache";
    codegen::CCompilerOptions options;
    options.cache_dir = dir_ + "/cache";
    for (std::string& flag : options.flags)
      if (!march.empty() && flag == "-march=native") flag = march;
    return codegen::CCompiler(options).compile(source);
  }

 private:
  std::string dir_;
};

// The activation parameters the epilogue tests pass (KILN_ACT_*: the clamp's bounds 0 and 6, or
// the hard swish's slope 0.25 and offset 0.5 for act 3), as C macros of the act, and the
// activations computed in double.
inline constexpr const char* kActivationParameters =
    "#define ACT_LO(act) ((act) == 3 ? 0.25f : 0.0f)\n#define ACT_HI(act) ((act) == 3 ? 0.5f : 6.0f)\n";
inline double reference_activation(double v, int64_t act) {
  if (act == 1) return std::isnan(v) ? v : std::min(6.0, std::max(0.0, v));
  if (act == 2) return v / (1.0 + std::exp(-v));
  if (act == 3) return v * std::min(1.0, std::max(0.0, v * 0.25 + 0.5));
  return v;
}

// A suite run once per instruction set the micro-kernels have a path for (the parameter is the
// -march flag, kKernelInstructionSets), sharing one kernel cache.
class PerIsaKernelTest : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() { cache_ = std::make_unique<TestKernelCache>(); }
  static void TearDownTestSuite() { cache_.reset(); }

  // Whether this CPU runs code built for the parameter (AVX-512 needs avx512f).
  static bool cpu_runs_param() {
    return std::string(GetParam()).find("avx512") == std::string::npos || __builtin_cpu_supports("avx512f");
  }
  // lib.so of `source` for the parameter's instruction set.
  static std::string compile_for_param(const std::string& source) { return cache_->compile(source, GetParam()); }

  static inline std::unique_ptr<TestKernelCache> cache_;
};

// AVX-512 (16-lane tiles), AVX2 (8-lane tiles), x86-64 without AVX (the portable loops).
inline const auto kKernelInstructionSets =
    ::testing::Values("-march=skylake-avx512", "-march=haswell", "-march=x86-64");

}  // namespace kiln::testing
