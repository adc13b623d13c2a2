// Ops: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_pool_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
