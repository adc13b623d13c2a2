// How to evaluate one function body (or one closed expression) without recursion: its
// nodes numbered children-first, each with its operands and the number of operand slots
// that use it, so that a frame can free every value after its last use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kiln/ir/expr.h"
#include "kiln/ir/op.h"
#include "kiln/runtime/kernel_registry.h"

namespace kiln::interp {

using NodeId = uint32_t;

// What an op call needs at run time, worked out once per call node.
struct OpCall {
  const OpDef* def = nullptr;
  Attrs attrs;  // normalised by the op's schema
  // Result and argument types are fully known, so outputs are allocated from the
  // checked type; otherwise (unknown dims) the type relation runs on the actual shapes.
  bool static_types = false;
  const KernelFn* kernel = nullptr;  // looked up on first use
};

struct FramePlan {
  FramePlan() = default;
  FramePlan(FramePlan&&) = default;
  FramePlan& operator=(FramePlan&&) = default;
  // Drops parents before children: were the plan the last owner of a long chain, dropping
  // its root first would free the whole chain recursively and could overflow the stack.
  ~FramePlan() {
    while (!nodes.empty()) nodes.pop_back();
  }

  std::vector<Expr> nodes;  // by id, children before parents
  // Operands of each node: Call: non-op callee then args; Tuple: fields; TupleGetItem:
  // the tuple; Function: its free variables; Let: value, body; If: cond, then, else.
  std::vector<std::vector<NodeId>> operands;
  // operands[i][0, eager[i]) are evaluated before node i. If branches and Let values and
  // bodies are not: the node evaluates them itself, in order and only when needed.
  std::vector<uint32_t> eager;
  std::vector<uint32_t> users;                    // operand slots referring to each node
  std::vector<std::unique_ptr<OpCall>> op_calls;  // by id; null except for op calls
  std::unordered_map<const ExprNode*, NodeId> ids;
  NodeId root = 0;

  const NodeId* find(const ExprNode* e) const {
    auto it = ids.find(e);
    return it == ids.end() ? nullptr : &it->second;
  }
};

using FreeVarsFn = std::function<const std::vector<Var>&(const FunctionNode&)>;

// Plans the nodes reachable from `root` without entering nested functions (a nested
// function is one node whose operands are its free variables).
FramePlan build_frame_plan(const Expr& root, const FreeVarsFn& free_vars);

// Variables a function uses but does not bind, in order of first use.
std::vector<Var> compute_free_vars(const FunctionNode& fn);

}  // namespace kiln::interp
