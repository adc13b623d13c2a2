#include "kiln/ir/module.h"

#include "kiln/support/error.h"

namespace kiln {

IRModule IRModule::from_function(Function main) {
  IRModule m;
  m.add("main", std::move(main));
  return m;
}

void IRModule::add(const std::string& name, Function fn) {
  for (auto& [n, f] : functions_) {
    if (n == name) {
      f = std::move(fn);
      return;
    }
  }
  functions_.emplace_back(name, std::move(fn));
}

void IRModule::remove(const std::string& name) {
  std::erase_if(functions_, [&](const auto& entry) { return entry.first == name; });
}

bool IRModule::contains(const std::string& name) const { return find(name) != nullptr; }

const Function* IRModule::find(const std::string& name) const {
  for (const auto& [n, f] : functions_)
    if (n == name) return &f;
  return nullptr;
}

const Function& IRModule::lookup(const std::string& name) const {
  const Function* f = find(name);
  if (!f) throw Error(cat("module has no function @", name));
  return *f;
}

std::vector<std::string> IRModule::names() const {
  std::vector<std::string> out;
  for (const auto& entry : functions_) out.push_back(entry.first);
  return out;
}

}  // namespace kiln
