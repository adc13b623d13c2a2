#include <algorithm>

#include "cli.h"
#include "kiln/support/error.h"

namespace kiln::cli {

Args::Args(const std::vector<std::string>& argv, const std::vector<std::string>& value_flags,
           const std::vector<std::string>& bool_flags) {
  auto listed = [](const std::vector<std::string>& list, const std::string& f) {
    return std::find(list.begin(), list.end(), f) != list.end();
  };
  auto takes_value = [&](const std::string& f) { return listed(value_flags, f); };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      positionals_.push_back(a);
      continue;
    }
    size_t eq = a.find('=');
    std::string flag = a.substr(0, eq);
    if (eq != std::string::npos) {
      check(takes_value(flag), "option ", flag, " takes no value");
      flags_.emplace(flag, a.substr(eq + 1));
    } else if (takes_value(flag)) {
      check(i + 1 < argv.size(), "option ", flag, " needs a value");
      flags_.emplace(flag, argv[++i]);
    } else {
      check(listed(bool_flags, flag), "unknown option ", flag);
      flags_.emplace(flag, "");
    }
  }
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto range = flags_.equal_range(flag);
  if (range.first == range.second) return fallback;
  return std::prev(range.second)->second;
}

std::vector<std::string> Args::all(const std::string& flag) const {
  std::vector<std::string> out;
  auto range = flags_.equal_range(flag);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

int Args::get_int(const std::string& flag, int fallback) const {
  std::string v = get(flag);
  if (v.empty()) return fallback;
  try {
    size_t used = 0;
    int n = std::stoi(v, &used);
    if (used == v.size()) return n;
  } catch (const std::exception&) {
  }
  throw std::move(Error(cat("option ", flag, " needs an integer")).expected("an integer", "'" + v + "'"));
}

}  // namespace kiln::cli
