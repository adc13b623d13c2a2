// kiln print FILE [--pass NAME]...: the module after type inference and the named passes.
#include <iostream>

#include "cli.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln::cli {

int cmd_print(const Args& args) {
  check(args.positionals().size() == 1, "print takes one model file");
  LoadedModel model = load_model(args.positionals()[0], args);
  IRModule mod = infer_types(run_passes(model.module, args.all("--pass")));
  std::cout << print_module(mod);
  return 0;
}

}  // namespace kiln::cli
