// What each pass of a pipeline did to the module, for `kiln compile --stats`: how many
// kernels @main would launch after it (a call of an op or of a fused function each launches
// one), how many op calls the module holds in all, how many constants, and how many calls
// still compute from constants alone.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/transform/pass.h"

namespace kiln {

struct ModuleCounts {
  int64_t kernels = 0;    // calls in @main's dataflow: one kernel launch each
  int64_t op_calls = 0;   // op calls anywhere, inside fused functions too
  int64_t fused = 0;      // calls of Primitive=1 functions in @main
  int64_t constants = 0;  // distinct constants anywhere
  // Deterministic op calls in @main whose arguments are all constants: 0 means no
  // sub-expression of @main depends on constants alone (each such one contains such a call).
  int64_t constant_only = 0;
};

ModuleCounts count_module(const IRModule& mod);

class PassStatistics : public PassInstrument {
 public:
  struct Row {
    std::string pass;
    double seconds;
    ModuleCounts counts;
  };
  void after_pass(const PassInfo& info, const IRModule& result, double seconds) override;
  const std::vector<Row>& rows() const { return rows_; }
  // One line per pass, with the kernels before fusion (after the last pass before FuseOps)
  // and after it.
  void print(std::ostream& out) const;

 private:
  std::vector<Row> rows_;
};

}  // namespace kiln
