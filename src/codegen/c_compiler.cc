#include "kiln/codegen/c_compiler.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <numeric>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/interrupt.h"
#include "kiln/support/strings.h"

#ifndef KILN_INCLUDE_DIR
#define KILN_INCLUDE_DIR ""
#endif

namespace kiln::codegen {

namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string read_file_or_empty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return in ? read_all(in) : std::string();
}

std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The line a person needs to see: the first error the compiler reports.
std::string first_error_line(const std::string& output, int status) {
  std::vector<std::string> lines = split(output, '\n');
  for (const auto& l : lines)
    if (l.find("error") != std::string::npos) return l;
  for (const auto& l : lines)
    if (!l.empty()) return l;
  return cat("exit status ", status);
}

// Helpers of microkernels.h that a unit compiles in full once if any of its functions calls
// them (they run as thread-pool tasks, so no call site specialises them), with what they cost
// the C compiler in characters of generated functions that take as long: the Winograd driver
// (both block widths' transforms and the panel GEMM) about 1.9 s of GCC -O3, as much as 20 KB
// of convolution functions. Units group a helper's callers so that it is compiled once.
struct SharedHelper {
  std::string_view call;
  size_t cost;
};
constexpr SharedHelper kSharedHelpers[] = {{"kiln_conv2d_winograd_f32(", 20000}};

// Which of kSharedHelpers a function calls, one bit each.
uint32_t helpers_called(std::string_view function) {
  uint32_t mask = 0;
  for (size_t h = 0; h < std::size(kSharedHelpers); ++h)
    if (function.find(kSharedHelpers[h].call) != std::string_view::npos) mask |= 1u << h;
  return mask;
}

// The cost a unit that already compiles the helpers in `present` adds with a function calling `called`.
size_t helper_cost(uint32_t present, uint32_t called) {
  size_t cost = 0;
  for (size_t h = 0; h < std::size(kSharedHelpers); ++h)
    if ((called & ~present) & (1u << h)) cost += kSharedHelpers[h].cost;
  return cost;
}

// Functions assigned to units, and the cost of the costliest unit.
struct Assignment {
  std::vector<std::vector<size_t>> members;
  size_t max_cost = 0;
};

// Items (groups of functions, by index) costliest first, each into the unit whose cost grows the
// least: a unit's cost is its functions' text plus each shared helper they call, once.
Assignment assign_items(std::vector<std::vector<size_t>> items, const std::vector<std::string_view>& functions,
                        const std::vector<uint32_t>& helpers, size_t count) {
  const auto grown = [&](size_t cost, uint32_t present, const std::vector<size_t>& item) {
    for (size_t f : item) {
      cost += functions[f].size() + helper_cost(present, helpers[f]);
      present |= helpers[f];
    }
    return cost;
  };
  std::vector<size_t> own(items.size());
  for (size_t i = 0; i < items.size(); ++i) own[i] = grown(0, 0, items[i]);
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return own[a] > own[b]; });
  Assignment out;
  out.members.resize(count);
  std::vector<size_t> costs(count, 0);
  std::vector<uint32_t> present(count, 0);
  for (size_t i : order) {
    size_t best = 0;
    for (size_t u = 1; u < count; ++u)
      if (grown(costs[u], present[u], items[i]) < grown(costs[best], present[best], items[i])) best = u;
    costs[best] = grown(costs[best], present[best], items[i]);
    for (size_t f : items[i]) present[best] |= helpers[f];
    out.members[best].insert(out.members[best].end(), items[i].begin(), items[i].end());
  }
  out.max_cost = *std::max_element(costs.begin(), costs.end());
  return out;
}

// The better of two assignments: each function on its own, and the callers of the same shared
// helpers kept together (one compile of the helper, but a coarser item to balance).
std::vector<std::vector<size_t>> assign_functions(const std::vector<std::string_view>& functions, size_t count) {
  std::vector<uint32_t> helpers(functions.size());
  std::vector<std::vector<size_t>> alone, grouped;
  std::map<uint32_t, size_t> group_of_helpers;
  for (size_t f = 0; f < functions.size(); ++f) {
    helpers[f] = helpers_called(functions[f]);
    alone.push_back({f});
    if (helpers[f] == 0) {
      grouped.push_back({f});
      continue;
    }
    auto [at, added] = group_of_helpers.emplace(helpers[f], grouped.size());
    if (added) grouped.emplace_back();
    grouped[at->second].push_back(f);
  }
  Assignment one_by_one = assign_items(std::move(alone), functions, helpers, count);
  Assignment by_helper = assign_items(std::move(grouped), functions, helpers, count);
  return by_helper.max_cost < one_by_one.max_cost ? by_helper.members : one_by_one.members;
}

}  // namespace

std::vector<std::string> split_units(const std::string& source, size_t count) {
  const size_t first = source.find(kUnitBoundary);
  if (count < 2 || first == std::string::npos) return {source};
  std::vector<std::string_view> functions;
  for (size_t at = first; at != std::string::npos;) {
    const size_t next = source.find(kUnitBoundary, at + kUnitBoundary.size());
    functions.push_back(std::string_view(source).substr(at, (next == std::string::npos ? source.size() : next) - at));
    at = next;
  }
  if (functions.size() < 2) return {source};
  std::vector<std::vector<size_t>> members = assign_functions(functions, std::min(count, functions.size()));
  std::vector<std::string> units;
  for (std::vector<size_t>& unit : members) {
    if (unit.empty()) continue;
    std::sort(unit.begin(), unit.end());
    std::string text = source.substr(0, first);
    for (size_t f : unit) text += functions[f];
    units.push_back(std::move(text));
  }
  return units;
}

namespace {

unsigned job_count(unsigned jobs) {
  if (jobs > 0) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

// The file of the i-th unit kernels.c is split into.
std::string unit_source_name(size_t i) { return cat("unit", i, ".c"); }

}  // namespace

std::vector<std::string> default_kernel_flags() {
#ifdef KILN_SANITIZE_GENERATED_CODE
  // The sanitizers check the C as written at any level; -O2 compiles a large sanitized unit about
  // four times faster than -O3 (the release build's kernels are what the -O3 code is tested by).
  const char* optimization = "-O2";
#else
  const char* optimization = "-O3";
#endif
  std::vector<std::string> flags = {optimization, "-march=native", "-fPIC", "-std=c11",
                                    "-fwrapv" /* integers wrap, as in the reference kernels */,
                                    "-fno-math-errno" /* lets sqrt vectorize; results are unchanged */,
                                    /* No kernel reads the floating-point exception flags: without this GCC
                                     * may not compute a division on both sides of a select, so a clamp that
                                     * it threads into a branch keeps the loop scalar (erf-GELU's tail,
                                     * ConvNeXt-T's and ViT-B/16's MLPs). Results are unchanged. */
                                    "-fno-trapping-math"};
#ifdef KILN_SANITIZE_GENERATED_CODE
  // Compile flags only: lib.so is linked without a sanitizer runtime and calls the one of the
  // process that loads it (kiln's own; see CCompilerOptions::link_flags).
  for (const char* flag : {"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"})
    flags.push_back(flag);
#endif
  return flags;
}

std::string fnv1a_hex(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(hash));
  return digits;
}

CCompiler::CCompiler(CCompilerOptions options) : options_(std::move(options)) {
  if (options_.include_dir.empty()) options_.include_dir = default_include_dir();
  if (options_.cache_dir.empty()) options_.cache_dir = default_cache_dir();
}

std::string CCompiler::default_cache_dir() {
  if (std::string dir = env_or_empty("KILN_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/kiln";
  if (std::string home = env_or_empty("HOME"); !home.empty()) return home + "/.cache/kiln";
  return "/tmp/kiln-cache";
}

std::string CCompiler::default_include_dir() {
  if (std::string dir = env_or_empty("KILN_INCLUDE_DIR"); !dir.empty()) return dir;
  // An installed kiln (PREFIX/bin/kiln) uses the headers installed with it, not the source tree.
  std::error_code ec;
  fs::path installed = fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path() / "include";
  if (!ec && fs::exists(installed / "kiln/runtime/kernel_abi.h", ec)) return installed.string();
  return KILN_INCLUDE_DIR;
}

std::string CCompiler::cache_key(const std::string& source) const {
  // The headers are part of the program: a changed micro-kernel must not hit an old library.
  fs::path include(options_.include_dir);
  std::string key = source + "\n--\n" + options_.compiler + "\n" + join(options_.flags, " ") + "\n" +
                    join(options_.link_flags, " ") + "\n" + options_.include_dir + "\n" +
                    read_file_or_empty(include / "kiln/runtime/kernel_abi.h") +
                    read_file_or_empty(include / "kiln/runtime/microkernels.h") +
                    read_file_or_empty(include / "kiln/runtime/vector_math.h");
  return fnv1a_hex(key);
}

std::string CCompiler::compile(const std::string& source) const {
  const fs::path entry = fs::path(options_.cache_dir) / cache_key(source);
  const fs::path library = entry / "lib.so";
  if (fs::exists(library)) return library.string();
  std::error_code ec;
  fs::create_directories(options_.cache_dir, ec);
  if (ec) throw Error(cat("cannot create the kernel cache directory: ", ec.message())).file(options_.cache_dir);
  remove_partials_of_dead_processes(options_.cache_dir);
  // The entry is built beside its final name and renamed into place: the cache holds complete
  // entries only, whatever interrupts the build.
  const PartialPath partial(partial_name_for(entry.string()));
  const fs::path staging(partial.path());
  fs::create_directories(staging, ec);
  if (ec) throw Error(cat("cannot create the kernel cache directory: ", ec.message())).file(staging.string());
  const fs::path kernels = staging / "kernels.c";
  write_file(kernels.string(), source);
  const BuildResult result = build_library(source, staging);
  // Status -1: a C compiler was killed (an interruption kills them all): no failed entry is kept
  // for a build that never finished.
  if (result.status < 0) throw Error("the C compiler was killed").file(options_.compiler);
  const bool built = result.status == 0 && fs::exists(staging / "lib.so");
  if (!built) fs::remove(staging / "lib.so", ec);
  // A failed build keeps its kernels.c in the cache for whoever reads the error; an earlier
  // failed build's entry gives way.
  fs::remove_all(entry, ec);
  fs::rename(staging, entry, ec);
  if (ec) fs::remove_all(staging, ec);  // another process completed the same entry first
  if (!built)
    // kiln generated the source, so code the C compiler rejects is kiln's fault.
    throw Error::bug(cat("the generated C does not compile: ", first_error_line(result.output, result.status)))
        .file((entry / result.file).string());
  return library.string();
}

std::string CCompiler::command(const std::vector<std::string>& flags, const std::vector<std::string>& extra) const {
  std::string command = shell_quote(options_.compiler);
  for (const auto& flag : flags) command += " " + shell_quote(flag);
  command += " " + shell_quote("-I" + options_.include_dir);
  for (const auto& arg : extra) command += " " + shell_quote(arg);
  return command;
}

CCompiler::BuildResult CCompiler::build_library(const std::string& source, const fs::path& dir) const {
  // One unit is kernels.c itself; several are written beside it and removed once linked.
  const std::vector<std::string> units = split_units(source, job_count(options_.jobs));
  const bool one_unit = units.size() == 1;
  std::vector<std::string> names, objects;
  std::vector<std::future<ProcessResult>> compiles;
  for (size_t i = 0; i < units.size(); ++i) {
    names.push_back(one_unit ? "kernels.c" : unit_source_name(i));
    if (!one_unit) write_file((dir / names.back()).string(), units[i]);
    objects.push_back((dir / cat("unit", i, ".o")).string());
    std::vector<std::string> args = {"-c", "-o", objects.back(), (dir / names.back()).string()};
    if (i > 0) args.insert(args.begin(), "-DKILN_SECONDARY_UNIT");
    compiles.push_back(std::async(std::launch::async, run_process, command(options_.flags, args)));
  }
  std::vector<ProcessResult> results;
  for (auto& c : compiles) results.push_back(c.get());
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].status != 0) return {results[i].status, std::move(results[i].output), names[i]};
  std::vector<std::string> link = {"-o", (dir / "lib.so").string()};
  link.insert(link.end(), objects.begin(), objects.end());
  ProcessResult result = run_process(command(options_.link_flags, link));
  if (result.status == 0) {
    std::error_code ec;
    for (size_t i = 0; i < units.size(); ++i) {
      if (!one_unit) fs::remove(dir / names[i], ec);
      fs::remove(objects[i], ec);
    }
  }
  return {result.status, std::move(result.output), "kernels.c"};
}

bool CCompiler::is_cached(const std::string& source) const {
  return fs::exists(fs::path(options_.cache_dir) / cache_key(source) / "lib.so");
}

void CCompiler::compile_into(const std::string& source, const std::string& dir) const {
  std::string library = compile(source);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(cat("cannot create directory: ", ec.message())).file(dir);
  fs::copy_file(library, fs::path(dir) / "lib.so", fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(cat("cannot copy the kernel library: ", ec.message())).file(dir);
  write_file((fs::path(dir) / "kernels.c").string(), source);
}

}  // namespace kiln::codegen
