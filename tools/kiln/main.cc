// kiln: compile, run and inspect models. Every failure ends in one line on stderr and a
// non-zero exit status.
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/support/interrupt.h"
#include "kiln/transform/pass.h"
#include "progress.h"

#ifndef KILN_VERSION
#define KILN_VERSION "unknown"
#endif
#ifndef KILN_GIT_REVISION
#define KILN_GIT_REVISION ""
#endif

namespace {

struct Command {
  const char* name;
  std::vector<std::string> value_flags;
  std::vector<std::string> bool_flags;
  std::function<int(const kiln::cli::Args&)> run;
  const char* usage;
  const char* summary;  // one line, for `kiln --help`
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"print",
       {"--pass", "-O", "--shape", "--bind", "--disable-pass", "--pass-option", "--weights"},
       {"--no-check", "--print-after-all"},
       kiln::cli::cmd_print,
       "kiln print FILE [-O N] [--pass NAME]... [--disable-pass NAME]... [--pass-option PASS.KEY=VALUE]... "
       "[--print-after-all] [--shape NAME=D0,D1,...] [--bind NAME=VALUE]... [--no-check] [--weights FILE.npz]",
       "print a model's IR, after passes or an opt level's pipeline"},
      {"compile",
       {"-o", "--target", "-O", "--shape", "--bind", "--disable-pass", "--pass-option", "--weights", "--variant"},
       {"--no-check", "--verbose", "--stats"},
       kiln::cli::cmd_compile,
       "kiln compile MODEL -o OUT.kiln [--target c] [-O 0..3] [--disable-pass NAME]... "
       "[--pass-option PASS.KEY=VALUE]... [--shape NAME=D0,D1,...] [--bind NAME=VALUE]... [--no-check] [--verbose] "
       "[--stats] [--weights FILE.npz] [--variant \"NAME=D0,D1,... [NAME=...]\"]...",
       "compile a model into an artifact folder (graph.json, lib.so, params.bin)"},
      {"run",
       {"--engine", "--inputs", "--outputs", "--random-inputs", "--shape", "--bind", "--threads", "-O", "--target",
        "--disable-pass", "--weights"},
       {"--no-check"},
       kiln::cli::cmd_run,
       "kiln run MODEL|OUT.kiln [--engine compiled|interp] [--inputs DIR] [--outputs DIR] [--random-inputs SEED] "
       "[--bind NAME=VALUE]... [--threads N] [-O N] [--weights FILE.npz]",
       "run a model or artifact on .npy inputs and write its outputs"},
      {"bench",
       {"--threads", "--warmup", "--repeat", "--inputs", "--shape", "--bind", "-O", "--target", "--disable-pass",
        "--weights"},
       {"--no-check", "--profile"},
       kiln::cli::cmd_bench,
       "kiln bench MODEL|OUT.kiln [--threads N] [--warmup N] [--repeat N] [--inputs DIR] [--bind NAME=VALUE]... "
       "[--profile] [--weights FILE.npz]   # last line: "
       "median_ms=... min_ms=...",
       "time runs of a model or artifact (--profile: time per kernel)"},
      {"onnx-test",
       {"--engine"},
       {"--verbose", "--bake-inputs"},
       kiln::cli::cmd_onnx_test,
       "kiln onnx-test CASE_DIR... [--engine interp|compiled] [--verbose] [--bake-inputs]",
       "run ONNX backend test cases (model.onnx + test_data_set_*)"},
      {"onnx-ops",
       {},
       {},
       kiln::cli::cmd_onnx_ops,
       "kiln onnx-ops   # supported ONNX ops and opset versions",
       "list the supported ONNX ops and opset versions"},
      {"export-mlir",
       {"-o", "--shape", "--bind"},
       {"--no-check"},
       kiln::cli::cmd_export_mlir,
       "kiln export-mlir MODEL -o DIR/NAME [--shape NAME=D0,D1,...] [--bind NAME=VALUE]...   # NAME_origin.mlir + "
       "NAME_TOP_F32_all_weight.npz",
       "write a model as tpu-mlir's Top dialect and its weights"},
      {"viz",
       {"-o", "-O", "--profile", "--shape", "--bind", "--disable-pass", "--pass-option", "--weights"},
       {"--no-check"},
       kiln::cli::cmd_viz,
       "kiln viz MODEL -o graph.html [-O N] [--profile FILE] [--shape NAME=D0,D1,...] [--bind NAME=VALUE]...",
       "draw the graph before and after fusion as a self-contained HTML page"},
  };
  return table;
}

// What each flag does, shared by the commands that take it.
const std::map<std::string, const char*>& flag_help() {
  static const std::map<std::string, const char*> help = {
      {"-o", "output (artifact folder, file or file prefix)"},
      {"-O", "opt level 0..3 (default 3): which passes of the build pipeline run"},
      {"--pass", "run this pass (repeatable, in order)"},
      {"--disable-pass", "do not run this pass (repeatable)"},
      {"--pass-option", "PASS.KEY=VALUE: an option of a pass (true/false, integer or string)"},
      {"--print-after-all", "print each pass's name, time and the module after it"},
      {"--shape", "NAME=D0,D1,...: fix an input's shape"},
      {"--variant", "\"NAME=D0,D1,... [NAME=...]\": input shapes to compile ahead when inputs have '?' dimensions"},
      {"--bind", "NAME=VALUE: bind an input to a constant (repeatable)"},
      {"--weights", "FILE.npz: parameter values for an IR-text model"},
      {"--no-check", "skip the model checks before type inference"},
      {"--target", "code generation target (only c)"},
      {"--verbose", "print notes (pass times, reference-kernel fallbacks)"},
      {"--stats", "print each pass's time and the kernels, calls and constants after it"},
      {"--engine", "compiled (default) or interp (the reference interpreter)"},
      {"--inputs", "DIR: one NAME.npy per input"},
      {"--outputs", "DIR: where to write one NAME.npy per output"},
      {"--random-inputs", "SEED: random inputs instead of --inputs"},
      {"--threads", "N: threads of the graph executor (default 1)"},
      {"--warmup", "N: untimed runs first (default 5)"},
      {"--repeat", "N: timed runs (default 20)"},
      {"--profile", "bench: also print the time of each kernel; viz: FILE of that output (share per kernel)"},
  };
  return help;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

std::string version() {
  std::string v = std::string("kiln ") + KILN_VERSION;
  if (*KILN_GIT_REVISION) v += std::string(" (git ") + KILN_GIT_REVISION + ")";
  return v;
}

int print_overview(std::ostream& out) {
  out << "usage: kiln COMMAND [ARGS...]   (kiln help COMMAND, kiln COMMAND --help: its options)\n"
      << "       kiln --version\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = c.name;
    out << "  " << name << std::string(name.size() < 13 ? 13 - name.size() : 1, ' ') << c.summary << "\n";
  }
  return 0;
}

int print_command_help(const Command& c) {
  std::cout << "usage: " << c.usage << "\n\n" << c.summary << "\n";
  std::vector<std::string> flags = c.value_flags;
  flags.insert(flags.end(), c.bool_flags.begin(), c.bool_flags.end());
  if (!flags.empty()) std::cout << "\noptions:\n";
  for (const std::string& f : flags) {
    auto it = flag_help().find(f);
    std::cout << "  " << f << std::string(f.size() < 18 ? 18 - f.size() : 1, ' ')
              << (it == flag_help().end() ? "" : it->second) << "\n";
  }
  return 0;
}

int unknown_command(const std::string& name) {
  std::cerr << "kiln: error: unknown command '" << name << "' (kiln --help lists the commands)\n";
  return 2;
}

bool asks_for_help(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") return true;
  return false;
}

int run_command(const Command& c, const std::vector<std::string>& rest) {
  try {
    kiln::register_builtin_ops();
    kiln::register_builtin_passes();
    return c.run(kiln::cli::Args(rest, c.value_flags, c.bool_flags));
  } catch (const std::bad_alloc&) {
    kiln::cli::clear_progress();
    std::cerr << "kiln: error: out of memory\n";
  } catch (const std::exception& e) {
    kiln::cli::clear_progress();
    std::cerr << "kiln: error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

namespace {

// A build moves a model's weights (ResNet-50: 100 MB) through several short-lived copies. By
// default glibc maps each large buffer afresh and unmaps it on free, so every copy faults in new
// zeroed pages (a fifth of a warm-cache compile); kept in the heap, freed pages are reused.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  // Ctrl-C or a kill while compiling leaves no half-written artifact or cache entry.
  kiln::install_interrupt_cleanup();
  if (argc < 2) {
    print_overview(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (name == "--help" || name == "-h") return print_overview(std::cout);
  if (name == "--version") {
    std::cout << version() << "\n";
    return 0;
  }
  if (name == "help") {
    if (rest.empty()) return print_overview(std::cout);
    const Command* c = find_command(rest[0]);
    return c ? print_command_help(*c) : unknown_command(rest[0]);
  }
  if (const Command* c = find_command(name))
    return asks_for_help(rest) ? print_command_help(*c) : run_command(*c, rest);
  return unknown_command(name);
}
