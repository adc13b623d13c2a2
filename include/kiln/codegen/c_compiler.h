// Builds generated C into a shared library with the system compiler, cached by a hash of the
// source, the command line and the kiln headers it includes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::codegen {

// The flags generated kernels are compiled with. A kiln built with sanitizers (KILN_SANITIZE) adds
// -fsanitize=address,undefined, so its tests check the generated code's memory accesses too.
std::vector<std::string> default_kernel_flags();

// The line generate_c puts before each function. CCompiler builds a source that has them as
// several units in parallel (the C compiler is most of a cold build): each unit is what
// precedes the first boundary (the preamble) and some of the functions; units after the first
// are compiled with KILN_SECONDARY_UNIT defined, so they declare what the preamble defines.
inline constexpr std::string_view kUnitBoundary = "/* kiln: unit boundary */\n";

// The source split at kUnitBoundary into at most `count` units of about equal compile cost, each
// the preamble followed by whole functions in their source order; the source itself when it has
// fewer than two functions or one unit is asked for. Functions that call the same shared helper
// of microkernels.h (one the compiler builds once per unit, not per call) share a unit.
std::vector<std::string> split_units(const std::string& source, size_t count);

struct CCompilerOptions {
  std::string compiler = "cc";
  unsigned jobs = 0;  // C compilers run at once; 0: one per hardware thread
  std::vector<std::string> flags = default_kernel_flags();
  // The link of the objects into lib.so, without -fsanitize: instrumented kernels call the
  // sanitizer runtime of the process that loads them. kiln's sanitized build is clang's, and cc
  // (GCC) compiles the kernels there (clang-14 needs over 100 s for a sanitized Winograd kernel);
  // GCC's own runtime linked in would abort the process as a second ASan runtime, while its
  // instrumentation calls clang's (the same compiler-rt interface) and reports through it.
  std::vector<std::string> link_flags = {"-shared"};
  std::string include_dir;  // kiln's include/ (for kernel_abi.h, microkernels.h); empty: default
  std::string cache_dir;    // empty: default_cache_dir()
};

class CCompiler {
 public:
  explicit CCompiler(CCompilerOptions options = {});

  // Path of lib.so built from `source` (kernels.c lies next to it). Compiles only on a cache miss.
  // A compiler failure throws kiln::Error with the compiler's first error line.
  std::string compile(const std::string& source) const;
  // compile(), then copies lib.so and kernels.c into `dir` (created if missing).
  void compile_into(const std::string& source, const std::string& dir) const;
  // Whether compile(source) would find lib.so in the cache (no C compiler run).
  bool is_cached(const std::string& source) const;

  const CCompilerOptions& options() const { return options_; }

  // $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln, else /tmp/kiln-cache.
  static std::string default_cache_dir();
  // $KILN_INCLUDE_DIR, else PREFIX/include of an installed program (PREFIX/bin/kiln), else the
  // include/ directory of the source tree kiln was built from.
  static std::string default_include_dir();

 private:
  // The C compiler's exit status and output, and the file its errors are about.
  struct BuildResult {
    int status = 0;
    std::string output;
    std::string file;
  };
  std::string cache_key(const std::string& source) const;
  // The compiler, `flags` and the include directory, then `extra`, quoted for the shell.
  std::string command(const std::vector<std::string>& flags, const std::vector<std::string>& extra) const;
  // Builds dir/lib.so from `source` (already written as dir/kernels.c): one compiler run per
  // unit (split at kUnitBoundary, up to `jobs` at once), then a link.
  BuildResult build_library(const std::string& source, const std::filesystem::path& dir) const;

  CCompilerOptions options_;
};

// 64-bit FNV-1a of `text`, as 16 hex digits.
std::string fnv1a_hex(const std::string& text);

}  // namespace kiln::codegen
