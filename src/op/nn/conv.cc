// Ops: nn.conv2d, nn.conv2d_transpose.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_nn_conv_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
