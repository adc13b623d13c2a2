// kiln compile MODEL -o OUT.kiln [--target c] [-O N] [--shape NAME=D0,D1,...]: writes the
// artifact folder (graph.json, lib.so, params.bin and kernels.c to read). --stats prints, per
// pass, its time and the kernels, op calls and constants the module has after it. A model
// whose inputs keep dimensions unknown ('?') becomes a folder of shape variants
// (shape_variants.h): --variant "NAME=D0,... [NAME=...]" compiles one ahead of time.
#include <chrono>
#include <iostream>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass_statistics.h"
#include "shape_variants.h"

namespace kiln::cli {

int cmd_compile(const Args& args) {
  check(args.positionals().size() == 1, "compile takes one model file");
  check(args.has("-o"), "compile needs the output folder: -o OUT.kiln");
  auto start = std::chrono::steady_clock::now();
  LoadedModel model = load_model(args.positionals()[0], args);
  if (has_run_time_dims(model)) {
    check(!args.has("--stats"), "--stats needs static input shapes (give them with --shape)");
    write_shape_variants(model, args, args.get("-o"));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "wrote " << args.get("-o") << ": inputs with dimensions known at run time; "
              << args.all("--variant").size() << " input shapes compiled in " << seconds
              << " s, others compiled on their first run\n";
    return 0;
  }
  check(args.all("--variant").empty(),
        "--variant applies to models whose inputs have dimensions unknown at compile time");
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
