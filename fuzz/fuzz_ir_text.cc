// The IR text parser, then type inference and the printer on whatever parses.
#include "fuzz_util.h"
#include "kiln/ir/op.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::register_builtin_ops();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::expect_only_user_errors([&] {
    kiln::IRModule mod = kiln::parse_module(kiln::fuzz::as_text(data, size), "<fuzz>");
    mod = kiln::infer_types(mod);
    (void)kiln::print_module(mod);
  });
  return 0;
}
