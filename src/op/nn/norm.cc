// Ops: nn.batch_norm, nn.layer_norm.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_norm_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
