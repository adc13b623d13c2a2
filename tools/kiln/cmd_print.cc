// kiln print FILE [-O N] [--pass NAME]... [--pass-option PASS.KEY=VALUE]... [--print-after-all]:
// the module after type inference, the named passes (with the options given), and with -O N
// the pipeline build() runs at that level (ending in FuseOps); with --print-after-all, each
// pass's name, time and the module after it.
#include <iostream>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/backend/build.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln::cli {

int cmd_print(const Args& args) {
  check(args.positionals().size() == 1, "print takes one model file");
  LoadedModel model = load_model(args.positionals()[0], args);
  PassContext ctx = pass_context(args);
  bool after_all = args.has("--print-after-all");
  if (after_all) ctx.instruments.push_back(print_after_each_pass(std::cout));
  try {
    IRModule mod = infer_types(run_passes(model.module, args.all("--pass"), ctx));
    if (args.has("-O")) mod = optimize(mod, ctx);
    if (!after_all) std::cout << print_module(mod);
  } catch (Error& e) {
    throw e.file(model.path);
  }
  return 0;
}

}  // namespace kiln::cli
