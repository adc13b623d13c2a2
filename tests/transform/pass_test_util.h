// Before/after helpers for pass tests: modules are written as IR text.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ir/text_test_util.h"
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

// The same, compared as printed text (whitespace aside), which also shows which nodes are
// shared: for passes whose point is sharing or dropping nodes.
inline void expect_pass_prints(const std::string& pass, const std::string& before, const std::string& after) {
  EXPECT_EQ(squash(print_module(run_pass(pass, before))), squash(print_module(parse_module(after))));
}

}  // namespace kiln::testing
