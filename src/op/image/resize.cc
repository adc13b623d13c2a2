// Ops: image.resize2d.
// TODO(owner of this family): attrs schema, type relation, pattern for each op.
#include "op/op_util.h"

namespace kiln {

void register_image_resize_ops(OpRegistry& registry) { (void)registry; }

}  // namespace kiln
