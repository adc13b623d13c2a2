// InferType: annotates every expression with its type (see kiln/ir/type_infer.h).
#include "kiln/ir/type_infer.h"
#include "kiln/transform/pass.h"

namespace kiln {

IRModule infer_type_pass(const IRModule& mod) { return infer_types(mod); }

}  // namespace kiln
