// Ops: nn.bias_add.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_bias_add_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
