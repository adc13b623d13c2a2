// Type inference: computes and caches the checked type of every node, checking each op
// call against its type relation. Errors name the function, the binding (%N), the op, and
// what did not match.
#pragma once

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"

namespace kiln {

// Type-checks every function of the module; returns the module (nodes now carry types).
IRModule infer_types(const IRModule& mod);
// Type of one expression; `mod` resolves calls of global functions (may be null).
Type infer_expr_type(const Expr& e, const IRModule* mod = nullptr);
// Types only the nodes of `e` that have no checked type yet, trusting the types already
// there, so a graph typed node by node as it is built costs time linear in its size. Errors
// of op calls keep their structure (node, op) without a function prefix.
Type infer_untyped_nodes(const Expr& e);

}  // namespace kiln
