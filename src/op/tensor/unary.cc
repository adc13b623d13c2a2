// Ops: sigmoid, tanh, exp, log, sqrt, rsqrt, erf, abs, negative, clip, cast.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_tensor_unary_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
