// kiln compile MODEL -o OUT.kiln [--target c] [-O N] [--shape NAME=D0,D1,...]: writes the
// artifact folder (graph.json, lib.so, params.bin and kernels.c to read). --stats prints, per
// pass, its time and the kernels, op calls and constants the module has after it.
#include <chrono>
#include <iostream>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass_statistics.h"

namespace kiln::cli {

int cmd_compile(const Args& args) {
  check(args.positionals().size() == 1, "compile takes one model file");
  check(args.has("-o"), "compile needs the output folder: -o OUT.kiln");
  auto start = std::chrono::steady_clock::now();
  LoadedModel model = load_model(args.positionals()[0], args);
  auto stats = args.has("--stats") ? std::make_shared<PassStatistics>() : nullptr;
  BuiltModel built = build_model(model, args, stats);
  write_artifact_with_progress(built, args.get("-o"));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (args.has("--verbose"))
    for (const std::string& f : built.fallbacks) std::cerr << "kiln: note: reference kernels for " << f << "\n";
  std::cout << "wrote " << args.get("-o") << ": " << built.num_kernels << " kernels, " << built.fallbacks.size()
            << " functions on reference kernels, compiled in " << seconds << " s\n";
  if (stats) stats->print(std::cout);
  return 0;
}

}  // namespace kiln::cli
