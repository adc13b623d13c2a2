// The .npy reader, and the .npz reader (zip entries, each a .npy) for inputs that are zips.
#include "fuzz_util.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/strings.h"
#include "runtime/zip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = kiln::fuzz::as_text(data, size);
  kiln::fuzz::expect_only_user_errors([&] {
    if (!kiln::starts_with(bytes, "PK")) {
      (void)kiln::parse_npy(bytes, "<fuzz>.npy");
      return;
    }
    kiln::zip::for_each_entry(bytes, "<fuzz>.npz", [](const std::string& name, std::string_view contents) {
      (void)kiln::parse_npy(contents, "<fuzz>.npz:" + name);
    });
  });
  return 0;
}
