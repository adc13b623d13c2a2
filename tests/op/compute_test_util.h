// Differential test of compute definitions: a Primitive function written as IR text is lowered
// through its ops' computes and schedules, compiled to a shared library, run on random inputs
// and compared with the interpreter running the same function on the reference kernels.
//
//   expect_compiled_matches_interpreter(R"(fn (%p0: Tensor[(2, 3), float32], Primitive=1) { exp(%p0) })");
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/lower_primitive.h"
#include "codegen/kernel_test_util.h"
#include "kiln/codegen/c_compiler.h"
#include "kiln/codegen/codegen_c.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"

namespace kiln::testing {

struct CompareOptions {
  double rtol = 1e-5;
  double atol = 1e-5;
  unsigned seed = 7;
  double low = -2, high = 2;  // range of float inputs; integer inputs take [low, high] too
  double nan_fraction = 0;    // float inputs: the share of elements that are NaN
  // Per-parameter [low, high] overriding the range above for the first ranges.size() parameters
  // (e.g. quantized data, zero points and scales, each with its own range).
  std::vector<std::pair<double, double>> ranges;
  // The machine the code is generated for (a smaller L2 makes the cache-blocked schedules block).
  Target target = Target::host();
};

// Default tolerances, inputs drawn from [low, high].
inline CompareOptions inputs_in(double low, double high) {
  CompareOptions o;
  o.low = low;
  o.high = high;
  return o;
}

inline NDArray random_tensor(const TensorTypeNode& type, std::mt19937& gen, const CompareOptions& o) {
  NDArray t = NDArray::empty(type.shape, type.dtype);
  std::uniform_real_distribution<double> real(o.low, o.high);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(o.low), static_cast<int64_t>(o.high));
  std::uniform_real_distribution<double> unit(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (type.dtype == DType::kBool)
      t.set(i, static_cast<double>(gen() & 1));
    else if (is_float(type.dtype))
      t.set(i, o.nan_fraction > 0 && unit(gen) < o.nan_fraction ? std::numeric_limits<double>::quiet_NaN() : real(gen));
    else
      t.set(i, static_cast<double>(integer(gen)));
  }
  return t;
}

inline std::string compute_test_cache_dir() { return ::testing::TempDir() + "kiln_compute_test_cache"; }

// Returns the generated C source (for tests that look at the schedule's effect).
inline std::string expect_compiled_matches_interpreter(const std::string& fn_text, CompareOptions o = {}) {
  Expr parsed = parse_expr(fn_text);
  infer_expr_type(parsed);
  Function fn = as_function(parsed);
  if (!fn) {
    ADD_FAILURE() << "not a function: " << fn_text;
    return "";
  }
  std::string obstacle = backend::compile_obstacle(*fn);
  if (!obstacle.empty()) {
    ADD_FAILURE() << "cannot compile: " << obstacle;
    return "";
  }
  std::string source = codegen::generate_c({backend::lower_primitive(*fn, "kernel", o.target)});
  codegen::CCompilerOptions options;
  options.cache_dir = compute_test_cache_dir();
  LoadedKernels lib(codegen::CCompiler(options).compile(source));

  std::mt19937 gen(o.seed);
  std::vector<NDArray> inputs;
  std::vector<Expr> constants;
  for (const Var& p : fn->params) {
    CompareOptions range = o;
    if (inputs.size() < o.ranges.size()) std::tie(range.low, range.high) = o.ranges[inputs.size()];
    inputs.push_back(random_tensor(expect_tensor(p->type_annotation, p->name), gen, range));
    constants.push_back(make_constant(inputs.back()));
  }
  std::vector<NDArray> want = interpret_expr(make_call(fn, constants)).flatten();
  std::vector<NDArray> got;
  std::vector<void*> args;
  for (NDArray& in : inputs) args.push_back(in.raw());
  for (const NDArray& w : want) {
    got.push_back(NDArray::empty(w.shape(), w.dtype()));
    args.push_back(got.back().raw());
  }
  EXPECT_EQ(lib.call("kernel", args), 0);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].dtype(), want[k].dtype());
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      double w = want[k].at(i), g = got[k].at(i);
      if ((std::isnan(w) && std::isnan(g)) || g == w) continue;  // equal infinities too
      if (!(std::fabs(g - w) <= o.atol + o.rtol * std::fabs(w))) {
        ADD_FAILURE() << "output " << k << " element " << i << ": compiled " << g << ", interpreter " << w << "\n"
                      << fn_text << "\n"
                      << source;
        return source;
      }
    }
  }
  return source;
}

}  // namespace kiln::testing
