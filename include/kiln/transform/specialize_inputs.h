// Specialising a model to the input shapes of one call: the step between an artifact compiled
// for dimensions known only at run time ('?') and the static code kiln generates. @main's
// parameters get the static types; type inference, DynamicToStatic and FoldConstant then turn
// the shape arithmetic the importer kept (dyn.shape_of, dyn.reshape, ...) into static ops.
#pragma once

#include <map>
#include <string>

#include "kiln/ir/module.h"
#include "kiln/ir/type.h"

namespace kiln {

// `mod` with @main's parameters named in `shapes` given those static shapes (dtype kept) and
// its result type left to inference; the module is type-checked again. Throws kiln::Error
// naming the input when a name is not a parameter of @main or a shape disagrees with the
// parameter's rank or static dimensions.
IRModule specialize_inputs(const IRModule& mod, const std::map<std::string, Shape>& shapes);

}  // namespace kiln
