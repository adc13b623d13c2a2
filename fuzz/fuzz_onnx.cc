// The ONNX loader end to end: bytes -> ModelProto -> ONNX checker -> conversion -> typed
// module. External data is looked up in an empty folder of the fuzzer's own.
#include "fuzz_util.h"
#include "kiln/frontend/onnx.h"
#include "kiln/ir/op.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::register_builtin_ops();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::expect_only_user_errors([&] {
    kiln::from_onnx_bytes(kiln::fuzz::as_text(data, size), {}, "<fuzz>", kiln::fuzz::scratch_dir().string());
  });
  return 0;
}
