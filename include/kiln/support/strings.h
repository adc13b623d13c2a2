// Small string helpers shared by the printer, parser and error messages.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

template <class Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::ostringstream os;
  bool first = true;
  for (const auto& item : items) {
    if (!first) os << sep;
    os << item;
    first = false;
  }
  return os.str();
}

// "(1, 3, 224, 224)" for a shape; unknown dimensions (-1) print as "?".
std::string shape_str(const std::vector<int64_t>& shape);

std::vector<std::string> split(std::string_view text, char sep);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);

// Shortest decimal text that reads back to the same double / float.
std::string format_double(double value);
std::string format_float(float value);

}  // namespace kiln
