// The artifact loader: graph.json and params.bin against a fixed, valid lib.so. An input is
// graph.json's text, optionally followed by kParamsMarker and params.bin's bytes; both are
// written into a scratch artifact folder whose lib.so links to $KILN_FUZZ_ARTIFACT_LIB (a
// real kernel library, made once by scripts/fuzz.sh) when that is set. A loaded artifact
// gets an executor, which allocates and binds every tensor; running kernels is not fuzzed
// (generated kernels trust the shapes the compiler gave them).
#include <cstdlib>
#include <fstream>

#include "fuzz_util.h"
#include "kiln/runtime/graph_executor.h"

namespace {

constexpr std::string_view kParamsMarker = "\n#params.bin\n";

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::filesystem::path& dir = kiln::fuzz::scratch_dir();
  if (const char* lib = std::getenv("KILN_FUZZ_ARTIFACT_LIB"); lib && *lib)
    std::filesystem::create_symlink(std::filesystem::absolute(lib), dir / "lib.so");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = kiln::fuzz::as_text(data, size);
  const std::filesystem::path& dir = kiln::fuzz::scratch_dir();
  const size_t marker = input.find(kParamsMarker);
  write_file(dir / "graph.json", input.substr(0, marker));
  std::error_code ignored;
  std::filesystem::remove(dir / "params.bin", ignored);
  if (marker != std::string_view::npos) write_file(dir / "params.bin", input.substr(marker + kParamsMarker.size()));
  kiln::fuzz::expect_only_user_errors([&] {
    auto artifact = kiln::Artifact::load(dir.string());
    kiln::GraphExecutor executor(artifact);
  });
  return 0;
}
