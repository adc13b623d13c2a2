// The folding FoldConstant and PrecomputePrune share.
#pragma once

#include <cstdint>

#include "kiln/ir/expr.h"

namespace kiln {

// A call FoldConstant evaluates (size aside): a deterministic op whose arguments are all
// constants or tuples of constants.
bool computes_from_constants(const CallNode& call);

// `typed_fn` with every deterministic call whose arguments are all constants replaced by its
// value (evaluated with the reference kernels). A result with more elements than both its
// constants and `free_growth` stays a call, so that a broadcast is not stored expanded.
Function fold_constant_calls(const Function& typed_fn, int64_t free_growth);

}  // namespace kiln
