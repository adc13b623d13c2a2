// IRModule: the named global functions of a program, in insertion order. A value type:
// copying is cheap (functions are shared, immutable nodes).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/expr.h"

namespace kiln {

class IRModule {
 public:
  IRModule() = default;
  // A module holding one function as "main".
  static IRModule from_function(Function main);

  // Adds or replaces (keeping the original position).
  void add(const std::string& name, Function fn);
  void remove(const std::string& name);
  bool contains(const std::string& name) const;
  // Throws kiln::Error when absent.
  const Function& lookup(const std::string& name) const;
  const Function* find(const std::string& name) const;
  const std::vector<std::pair<std::string, Function>>& functions() const { return functions_; }
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, Function>> functions_;
};

}  // namespace kiln
