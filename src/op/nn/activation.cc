// Ops: nn.relu, nn.leaky_relu, nn.prelu, nn.dropout.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_activation_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
