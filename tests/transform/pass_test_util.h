// Before/after helpers for pass tests: modules are written as IR text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/transform/pass.h"

namespace kiln::testing {

inline IRModule run_pass(const std::string& pass, const std::string& before) {
  return run_passes(parse_module(before), {pass});
}

// The pass turns `before` into a module structurally equal to `after`.
inline void expect_pass_result(const std::string& pass, const std::string& before, const std::string& after) {
  IRModule got = run_pass(pass, before);
  IRModule want = parse_module(after);
  EXPECT_TRUE(structural_equal(got, want)) << "got:\n" << print_module(got) << "\nwant:\n" << print_module(want);
}

}  // namespace kiln::testing
