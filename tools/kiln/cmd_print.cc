// kiln print FILE [-O N] [--pass NAME]...: the module after type inference, the named passes,
// and with -O N the pipeline build() runs at that level (ending in FuseOps).
#include <iostream>

#include "cli.h"
#include "kiln/backend/build.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln::cli {

int cmd_print(const Args& args) {
  check(args.positionals().size() == 1, "print takes one model file");
  LoadedModel model = load_model(args.positionals()[0], args);
  IRModule mod = infer_types(run_passes(model.module, args.all("--pass")));
  if (args.has("-O")) mod = optimize(mod, args.get_int("-O", 3));
  std::cout << print_module(mod);
  return 0;
}

}  // namespace kiln::cli
