// The analysis behind FuseOps: which nodes of a function body run as one fused kernel.
//
// It follows Relay's algorithm. The body's dataflow graph is indexed children-first; every
// edge carries the fusion pattern of its consumer (broadcast edges whose operand already
// has the result's shape count as elementwise). A post-dominator tree tells, for each node,
// the nearest node that every path from it to the output passes through. A node is fused
// into its post-dominator when every node on the paths between them allows it:
//   phase 0: an out-elementwise-fusable op (conv2d, dense) absorbs the elementwise and
//            broadcast ops that follow it;
//   phase 1: elementwise/broadcast ops fuse forward into injective, reduction or
//            already-fused groups; injective ops fuse into injective successors;
//   phase 2: injective ops fuse into a tuple that itself went into an injective group.
// Reductions end a group, opaque ops stand alone.
#pragma once

#include <cstddef>
#include <vector>

#include "kiln/ir/expr.h"
#include "kiln/ir/op.h"

namespace kiln::fusion {

// One node of the dataflow graph of a function body (nested functions are leaves).
struct GraphNode {
  Expr expr;
  OpPattern pattern = OpPattern::kOpaque;
  bool used_outside = false;  // the body's result: nothing after it may absorb it
  struct Use {
    size_t consumer;
    OpPattern pattern;
  };
  std::vector<Use> uses;
};

struct Grouping {
  std::vector<GraphNode> nodes;  // children before parents
  // For every node, the index of the node that represents its group: the group's last
  // node in the order above, where the fused function's result is produced.
  std::vector<size_t> group_root;
};

// Groups the nodes of `body` (a typed expression). With fuse=false every op stays alone,
// as Relay's fuse_opt_level=0 does. Groups never exceed `max_group_size` nodes.
Grouping group_for_fusion(const Expr& body, bool fuse, size_t max_group_size = 256);

}  // namespace kiln::fusion
