// Ops: nn.dense, nn.matmul, nn.batch_matmul.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_dense_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
