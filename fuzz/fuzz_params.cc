// params.bin, the weights of an artifact.
#include "fuzz_util.h"
#include "runtime/params_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::expect_only_user_errors([&] { (void)kiln::parse_params(kiln::fuzz::as_text(data, size), "<fuzz>"); });
  return 0;
}
