// The einsum equation, parsed once for given operand ranks. Shared by the einsum op's type
// relation (src/op/tensor/einsum.cc) and its reference kernel, so both read an equation
// the same way.
//
// Labels are numbered: the dimensions an ellipsis stands for come first (0 .. E-1, where E
// is the most dimensions any operand's "..." covers; an operand covering fewer takes the
// last ones, so ellipsis dimensions align from the right as in broadcasting), then the
// letters in order of first appearance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct EinsumEquation {
  std::vector<std::vector<int>> operand_labels;  // per operand, the label of each dimension
  std::vector<int> output_labels;                // the label of each output dimension
  std::vector<std::string> label_names;          // "i", or "...0" for ellipsis dimensions
  int num_labels() const { return static_cast<int>(label_names.size()); }
};

// Parses "ij,jk->ik", "...ii->...i", "bij,bjk" (implicit output: the ellipsis dimensions,
// then the letters used once, in alphabetical order). Spaces are ignored. Throws
// kiln::Error describing what is wrong (bad character, term count or rank mismatch,
// output letters not among the inputs or repeated).
EinsumEquation parse_einsum_equation(const std::string& equation, const std::vector<int64_t>& operand_ranks);

}  // namespace kiln
