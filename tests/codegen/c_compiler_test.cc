#include "kiln/codegen/c_compiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "codegen/kernel_test_util.h"
#include "kiln/support/error.h"

namespace kiln::codegen {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class CCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "kiln_cc_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  CCompiler compiler() const {
    CCompilerOptions options;
    options.cache_dir = (fs::path(dir_) / "cache").string();
    return CCompiler(options);
  }

  std::string dir_;
};

// What a kernel library defines besides its functions.
const std::string kAbiPreamble = R"(#include <stdint.h>
#include "kiln/runtime/kernel_abi.h"
const KilnRuntimeApi* kiln_runtime_api = 0;
int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }
)";

const std::string kSource = kAbiPreamble + R"(int32_t add_one(void* const* args) {
  const float* in = (const float*)args[0];
  float* out = (float*)args[1];
  for (int i = 0; i < 4; ++i) out[i] = in[i] + 1.0f;
  return 0;
}
)";

TEST_F(CCompilerTest, CompilesAndCachesBySource) {
  std::string library = compiler().compile(kSource);
  EXPECT_TRUE(fs::exists(library));
  EXPECT_TRUE(fs::exists(fs::path(library).parent_path() / "kernels.c"));
  {
    testing::LoadedKernels lib(library);
    float in[4] = {1, 2, 3, 4}, out[4] = {};
    ASSERT_EQ(lib.call("add_one", {in, out}), 0);
    EXPECT_EQ(out[3], 5.0f);
  }
  // A second compile of the same source reuses the library: mark it and see the mark survive.
  { std::ofstream(library, std::ios::app) << "MARK"; }
  auto size = fs::file_size(library);
  EXPECT_EQ(compiler().compile(kSource), library);
  EXPECT_EQ(fs::file_size(library), size);
  // Another source is another library.
  EXPECT_NE(compiler().compile(std::string(kSource) + "\n/* changed */\n"), library);
}

TEST_F(CCompilerTest, CopiesTheLibraryIntoAnArtifactFolder) {
  fs::path out = fs::path(dir_) / "OUT.kiln";
  compiler().compile_into(kSource, out.string());
  EXPECT_TRUE(fs::exists(out / "lib.so"));
  std::ifstream in(out / "kernels.c");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, kSource);
}

TEST_F(CCompilerTest, CompileErrorsCarryTheCompilersFirstError) {
  try {
    compiler().compile("int32_t broken(void* const* args) { return undefined_name; }\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kiln bug (please report it): the generated C does not compile"), std::string::npos) << what;
    EXPECT_TRUE(e.is_bug());
    EXPECT_NE(what.find("error"), std::string::npos) << what;
    EXPECT_NE(what.find("kernels.c"), std::string::npos) << what;
  }
  CCompilerOptions missing;
  missing.compiler = "/nonexistent/cc";
  missing.cache_dir = (fs::path(dir_) / "cache2").string();
  EXPECT_THROW(CCompiler(missing).compile(kSource), Error);
}

// A C compiler killed with the shell running it (what an interruption does to the process group)
// is no failed build: the compile throws and the cache keeps no entry for it, partial or whole.
TEST_F(CCompilerTest, AKilledCompilerLeavesNoCacheEntry) {
  const fs::path killer = fs::path(dir_) / "killed-cc";
  // Its parent is the shell running it, or this process when the shell execs the command.
  {
    std::ofstream(killer) << "#!/bin/sh\nif [ $PPID = " << ::getpid()
                          << " ]; then kill -KILL $$; fi\nkill -KILL $PPID\n";
  }
  fs::permissions(killer, fs::perms::owner_all);
  CCompilerOptions options;
  options.compiler = killer.string();
  options.cache_dir = (fs::path(dir_) / "cache").string();
  try {
    CCompiler(options).compile(kSource);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the C compiler was killed"), std::string::npos) << e.what();
    EXPECT_FALSE(e.is_bug());
  }
  EXPECT_TRUE(fs::is_empty(options.cache_dir)) << fs::directory_iterator(options.cache_dir)->path();
}

// A preamble in generate_c's form (the definition only outside secondary units) and three
// functions, each failing unless it sees the api pointer the loader set in the unit that defines it.
std::string units_source() {
  std::string source = R"(#include <stdint.h>
#include "kiln/runtime/kernel_abi.h"
#ifdef KILN_SECONDARY_UNIT
extern const KilnRuntimeApi* kiln_runtime_api;
#else
const KilnRuntimeApi* kiln_runtime_api = 0;
int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }
#endif
)";
  for (int k = 1; k <= 3; ++k)
    source += std::string(kUnitBoundary) + "static float step" + std::to_string(k) + "(float v) { return v + " +
              std::to_string(k) + ".0f; }\nint32_t add_" + std::to_string(k) +
              "(void* const* args) {\n  if (kiln_runtime_api == 0) return -1;\n  *(float*)args[1] = step" +
              std::to_string(k) + "(*(const float*)args[0]);\n  return 0;\n}\n";
  return source;
}

TEST_F(CCompilerTest, BuildsFunctionsAsParallelUnitsIntoOneLibrary) {
  CCompilerOptions options;
  options.cache_dir = (fs::path(dir_) / "cache").string();
  options.jobs = 3;
  const std::string library = CCompiler(options).compile(units_source());
  testing::LoadedKernels lib(library);
  for (int k = 1; k <= 3; ++k) {
    float in = 10, out = 0;
    ASSERT_EQ(lib.call("add_" + std::to_string(k), {&in, &out}), 0);
    EXPECT_EQ(out, 10.0f + static_cast<float>(k));
  }
  // The units are gone once linked; the whole source stays beside the library.
  const fs::path entry = fs::path(library).parent_path();
  EXPECT_FALSE(fs::exists(entry / "unit0.c"));
  EXPECT_FALSE(fs::exists(entry / "unit1.o"));
  EXPECT_TRUE(fs::exists(entry / "kernels.c"));
}

// Which unit of `units` holds the function that contains `text`.
size_t unit_of(const std::vector<std::string>& units, const std::string& text) {
  for (size_t u = 0; u < units.size(); ++u)
    if (units[u].find(text) != std::string::npos) return u;
  return units.size();
}

TEST(SplitUnits, BalancesTextAndGroupsTheCallersOfASharedHelper) {
  const std::string preamble = "/* preamble */\n";
  const auto function = [](const std::string& name, size_t size, const std::string& body) {
    return std::string(kUnitBoundary) + "int32_t " + name + "(void) { " + body + " }\n" + std::string(size, ' ');
  };
  // Two functions of 10 KB and two small ones that call the Winograd driver (20 KB's worth):
  // balancing by text alone would give each unit one of each, and each unit the driver.
  const std::string wino = "return kiln_conv2d_winograd_f32(0);";
  const auto source_with = [&](size_t big) {
    return preamble + function("big_a", big, "return 0;") + function("wino_a", 100, wino) +
           function("big_b", big, "return 0;") + function("wino_b", 100, wino);
  };
  const std::string source = source_with(10000);
  const std::vector<std::string> units = split_units(source, 2);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(unit_of(units, "wino_a"), unit_of(units, "wino_b"));
  EXPECT_EQ(unit_of(units, "big_a"), unit_of(units, "big_b"));
  EXPECT_NE(unit_of(units, "big_a"), unit_of(units, "wino_a"));
  for (const std::string& unit : units) EXPECT_EQ(unit.rfind(preamble, 0), 0u);
  // Functions keep their source order within a unit.
  const std::string& with_wino = units[unit_of(units, "wino_a")];
  EXPECT_LT(with_wino.find("wino_a"), with_wino.find("wino_b"));
  // When the other functions outweigh the helper, compiling it twice balances better.
  const std::vector<std::string> large = split_units(source_with(30000), 2);
  EXPECT_NE(unit_of(large, "wino_a"), unit_of(large, "wino_b"));
  EXPECT_NE(unit_of(large, "big_a"), unit_of(large, "big_b"));
  EXPECT_EQ(split_units(source, 1), std::vector<std::string>{source});
}

TEST_F(CCompilerTest, AUnitThatDoesNotCompileIsNamed) {
  CCompilerOptions options;
  options.cache_dir = (fs::path(dir_) / "cache").string();
  options.jobs = 2;
  std::string source =
      units_source() + std::string(kUnitBoundary) + "int32_t broken(void) { return undefined_name; }\n";
  try {
    CCompiler(options).compile(source);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(e.is_bug());
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;
    EXPECT_NE(what.find("/unit"), std::string::npos) << what;
  }
}

TEST_F(CCompilerTest, CacheDirectoryFollowsTheEnvironment) {
  const char* saved = std::getenv("KILN_CACHE_DIR");
  std::string saved_value = saved ? saved : "";
  setenv("KILN_CACHE_DIR", dir_.c_str(), 1);
  EXPECT_EQ(CCompiler::default_cache_dir(), dir_);
  unsetenv("KILN_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) {
    EXPECT_EQ(CCompiler::default_cache_dir(), std::string(xdg) + "/kiln");
  }
  if (saved) setenv("KILN_CACHE_DIR", saved_value.c_str(), 1);
  EXPECT_TRUE(fs::exists(fs::path(CCompiler::default_include_dir()) / "kiln/runtime/microkernels.h"));
}

TEST(Fnv1a, IsTheStandardHash) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
}

// In a sanitized kiln the kernels are instrumented and report through the sanitizer runtime of the
// process that loads them (kiln's, whichever compiler built it): an out-of-bounds read in a
// kernel stops the process with AddressSanitizer's report, and a too-large shift with UBSan's.
TEST_F(CCompilerTest, SanitizedKernelsReportThroughTheLoadingProcess) {
  const std::vector<std::string> flags = default_kernel_flags();
  if (std::find(flags.begin(), flags.end(), "-fsanitize=address,undefined") == flags.end())
    GTEST_SKIP() << "kiln is not built with sanitizers";
  const std::string source = kAbiPreamble + R"(int32_t read_at(void* const* args) {
  const float* in = (const float*)args[0];
  float* out = (float*)args[1];
  out[0] = in[*(const int64_t*)args[2]];
  return 0;
}
int32_t shift_by(void* const* args) {
  int32_t* value = (int32_t*)args[0];
  *value = 1 << *value;
  return 0;
}
)";
  testing::LoadedKernels lib(compiler().compile(source));
  std::vector<float> in(4, 1.0f);
  float out = 0;
  int64_t index = 3;
  ASSERT_EQ(lib.call("read_at", {in.data(), &out, &index}), 0);
  EXPECT_EQ(out, 1.0f);
  index = 4;
  EXPECT_DEATH(lib.call("read_at", {in.data(), &out, &index}), "heap-buffer-overflow");
  int32_t shift = 40;
  EXPECT_DEATH(lib.call("shift_by", {&shift}), "shift exponent 40 is too large");
}

}  // namespace
}  // namespace kiln::codegen
