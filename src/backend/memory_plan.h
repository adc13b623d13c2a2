// Storage planning for a graph plan: tensors whose lifetimes do not overlap share storage.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/graph_json.h"

namespace kiln::backend {

// Fills plan.storage_id (one id per entry). Variables (inputs, parameters) get storage of
// their own that is never reused; an operator's outputs take free storage (the smallest block
// that fits, else the largest free block, grown) and never the storage of their own inputs
// (generated kernels read and write through restrict pointers); an entry's storage is freed
// after its last reader runs, unless it is a graph output. Nodes run in order. Entries of
// different devices (device_index) never share storage.
void plan_memory(GraphPlan& plan);

}  // namespace kiln::backend
