// Operator attributes as JSON, the form kiln_ref nodes of graph.json carry in "op_attrs".
// An Attrs is an object whose keys keep their order; None is null, bools, integers and
// strings are JSON's own, floats always carry a fraction or exponent (1.0, not 1) so they
// read back as floats, non-finite floats are {"float": "inf" | "-inf" | "nan"}, and lists
// are arrays.
#pragma once

#include <string>
#include <string_view>

#include "kiln/runtime/attrs.h"

namespace kiln {

std::string attrs_to_json(const Attrs& attrs);
// Throws kiln::Error naming the attribute when the text is not such an object.
Attrs attrs_from_json(std::string_view text);

}  // namespace kiln
