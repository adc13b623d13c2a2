#include "runtime/kernels/tensor/einsum_equation.h"

#include <algorithm>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {
namespace {

constexpr int kEllipsis = -1;  // placeholder in a term until the ellipsis width is known

bool is_label_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A term as letters and at most one ellipsis (kEllipsis).
std::vector<int> parse_term(const std::string& term, const std::string& equation) {
  std::vector<int> items;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      check(!seen_ellipsis, "einsum equation '", equation, "' has two ellipses in the term '", term, "'");
      seen_ellipsis = true;
      items.push_back(kEllipsis);
      i += 2;
    } else if (is_label_letter(term[i])) {
      items.push_back(term[i]);
    } else {
      throw std::move(Error(cat("einsum equation '", equation, "' has an invalid character in the term '", term, "'"))
                          .expected("letters a-z, A-Z and '...'", std::string(1, term[i])));
    }
  }
  return items;
}

std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> terms(1);
  for (char c : text) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  return terms;
}

}  // namespace

EinsumEquation parse_einsum_equation(const std::string& equation, const std::vector<int64_t>& operand_ranks) {
  std::string text;
  for (char c : equation)
    if (c != ' ') text += c;
  const size_t arrow = text.find("->");
  const bool explicit_output = arrow != std::string::npos;
  std::vector<std::string> input_terms = split_terms(text.substr(0, arrow));
  if (input_terms.size() != operand_ranks.size())
    throw std::move(Error(cat("einsum equation '", equation, "' does not match the number of operands"))
                        .expected(cat(operand_ranks.size(), " input terms"), cat(input_terms.size())));

  // Ellipsis widths first: they fix the label numbering.
  std::vector<std::vector<int>> items;
  std::vector<int64_t> ellipsis_width(input_terms.size(), 0);
  int64_t max_width = 0;
  for (size_t k = 0; k < input_terms.size(); ++k) {
    items.push_back(parse_term(input_terms[k], equation));
    const bool has_ellipsis = std::count(items[k].begin(), items[k].end(), kEllipsis) == 1;
    const int64_t letters = static_cast<int64_t>(items[k].size()) - (has_ellipsis ? 1 : 0);
    const int64_t rank = operand_ranks[k];
    if (has_ellipsis ? rank < letters : rank != letters)
      throw std::move(Error(cat("einsum term '", input_terms[k], "' of equation '", equation,
                                "' does not match the rank of operand ", k))
                          .expected(cat(has_ellipsis ? "rank at least " : "rank ", letters), cat("rank ", rank)));
    ellipsis_width[k] = has_ellipsis ? rank - letters : 0;
    max_width = std::max(max_width, ellipsis_width[k]);
  }

  EinsumEquation eq;
  for (int64_t e = 0; e < max_width; ++e) eq.label_names.push_back(cat("...", e));
  std::map<char, int> letter_label;
  std::map<char, int> uses;
  for (size_t k = 0; k < items.size(); ++k) {
    std::vector<int>& labels = eq.operand_labels.emplace_back();
    for (int item : items[k]) {
      if (item == kEllipsis) {
        for (int64_t e = max_width - ellipsis_width[k]; e < max_width; ++e) labels.push_back(static_cast<int>(e));
        continue;
      }
      const char letter = static_cast<char>(item);
      auto [it, fresh] = letter_label.emplace(letter, eq.num_labels());
      if (fresh) eq.label_names.emplace_back(1, letter);
      ++uses[letter];
      labels.push_back(it->second);
    }
  }

  if (!explicit_output) {
    for (int64_t e = 0; e < max_width; ++e) eq.output_labels.push_back(static_cast<int>(e));
    for (const auto& [letter, count] : uses)  // std::map: alphabetical (ASCII) order
      if (count == 1) eq.output_labels.push_back(letter_label[letter]);
    return eq;
  }
  const std::string output_term = text.substr(arrow + 2);
  check(output_term.find("->") == std::string::npos, "einsum equation '", equation, "' has more than one '->'");
  std::vector<bool> used(static_cast<size_t>(eq.num_labels()), false);
  for (int item : parse_term(output_term, equation)) {
    if (item == kEllipsis) {
      for (int64_t e = 0; e < max_width; ++e) eq.output_labels.push_back(static_cast<int>(e));
      continue;
    }
    const char letter = static_cast<char>(item);
    auto it = letter_label.find(letter);
    check(it != letter_label.end(), "einsum equation '", equation, "': output label '", std::string(1, letter),
          "' appears in no input term");
    check(!used[static_cast<size_t>(it->second)], "einsum equation '", equation, "': output label '",
          std::string(1, letter), "' appears twice");
    used[static_cast<size_t>(it->second)] = true;
    eq.output_labels.push_back(it->second);
  }
  return eq;
}

}  // namespace kiln
