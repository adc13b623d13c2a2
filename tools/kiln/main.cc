// kiln: compile, run and inspect models. Every failure ends in one line on stderr and a
// non-zero exit status.
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <new>

#include "cli.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace {

struct Command {
  const char* name;
  std::vector<std::string> value_flags;
  std::vector<std::string> bool_flags;
  std::function<int(const kiln::cli::Args&)> run;
  const char* usage;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"print",
       {"--pass", "-O", "--shape", "--bind", "--disable-pass", "--pass-option", "--weights"},
       {"--no-check", "--print-after-all"},
       kiln::cli::cmd_print,
       "kiln print FILE [-O N] [--pass NAME]... [--disable-pass NAME]... [--pass-option PASS.KEY=VALUE]... "
       "[--print-after-all] [--shape NAME=D0,D1,...] [--bind NAME=VALUE]... [--no-check] [--weights FILE.npz]"},
      {"compile",
       {"-o", "--target", "-O", "--shape", "--bind", "--disable-pass", "--pass-option", "--weights"},
       {"--no-check", "--verbose", "--stats"},
       kiln::cli::cmd_compile,
       "kiln compile MODEL -o OUT.kiln [--target c] [-O 0..3] [--disable-pass NAME]... "
       "[--pass-option PASS.KEY=VALUE]... [--shape NAME=D0,D1,...] [--bind NAME=VALUE]... [--no-check] [--verbose] "
       "[--stats] [--weights FILE.npz]"},
      {"run",
       {"--engine", "--inputs", "--outputs", "--random-inputs", "--shape", "--bind", "--threads", "-O", "--target",
        "--disable-pass", "--weights"},
       {"--no-check"},
       kiln::cli::cmd_run,
       "kiln run MODEL|OUT.kiln [--engine compiled|interp] [--inputs DIR] [--outputs DIR] [--random-inputs SEED] "
       "[--bind NAME=VALUE]... [--threads N] [-O N] [--weights FILE.npz]"},
      {"bench",
       {"--threads", "--warmup", "--repeat", "--inputs", "--shape", "--bind", "-O", "--target", "--disable-pass",
        "--weights"},
       {"--no-check", "--profile"},
       kiln::cli::cmd_bench,
       "kiln bench MODEL|OUT.kiln [--threads N] [--warmup N] [--repeat N] [--inputs DIR] [--bind NAME=VALUE]... "
       "[--profile] [--weights FILE.npz]   # last line: "
       "median_ms=... min_ms=..."},
      {"onnx-test",
       {"--engine"},
       {"--verbose"},
       kiln::cli::cmd_onnx_test,
       "kiln onnx-test CASE_DIR... [--engine interp|compiled] [--verbose]"},
      {"onnx-ops", {}, {}, kiln::cli::cmd_onnx_ops, "kiln onnx-ops   # supported ONNX ops and opset versions"},
      {"export-mlir",
       {"-o", "--shape", "--bind"},
       {"--no-check"},
       kiln::cli::cmd_export_mlir,
       "kiln export-mlir MODEL -o DIR/NAME [--shape NAME=D0,D1,...] [--bind NAME=VALUE]...   # NAME_origin.mlir + "
       "NAME_TOP_F32_all_weight.npz"},
  };
  return table;
}

int usage() {
  std::cerr << "usage:\n";
  for (const auto& c : commands()) std::cerr << "  " << c.usage << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string name = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  for (const auto& c : commands()) {
    if (name != c.name) continue;
    try {
      kiln::register_builtin_ops();
      kiln::register_builtin_passes();
      return c.run(kiln::cli::Args(rest, c.value_flags, c.bool_flags));
    } catch (const kiln::Error& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
    } catch (const std::bad_alloc&) {
      std::cerr << "kiln: error: out of memory\n";
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
    }
    return 1;
  }
  std::cerr << "kiln: error: unknown command '" << name << "'\n";
  return usage();
}
