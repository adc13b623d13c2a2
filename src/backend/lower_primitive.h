// Lowers one fused (Primitive) function to loop IR through its ops' compute definitions and
// the anchor op's schedule.
#pragma once

#include <optional>
#include <string>

#include "kiln/ir/expr.h"
#include "kiln/op/strategy.h"
#include "kiln/tir/stmt.h"

namespace kiln::backend {

// `text` with every character that may not appear in a C identifier replaced by '_'.
std::string c_identifier(const std::string& text);

// Why a function cannot be compiled, or empty when it can.
std::string compile_obstacle(const FunctionNode& fn);

// The PrimFunc `name` computing `fn` (params in order, then one buffer per output). The
// function must be type-checked and free of obstacles (compile_obstacle() is empty).
tir::PrimFunc lower_primitive(const FunctionNode& fn, const std::string& name, const Target& target);

}  // namespace kiln::backend
