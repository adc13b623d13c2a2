#include "transform/fusion_groups.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/visit.h"

namespace kiln::fusion {

namespace {

OpPattern combine(OpPattern a, OpPattern b) { return std::max(a, b); }

bool is_static_tensor(const Type& t) {
  const auto* tensor = as_tensor(t);
  if (!tensor) return false;
  return std::none_of(tensor->shape.begin(), tensor->shape.end(), [](int64_t d) { return d == kAnyDim; });
}

bool is_tuple_of_static_tensors(const Type& t) {
  const auto* tuple = as_tuple(t);
  return tuple && std::all_of(tuple->fields.begin(), tuple->fields.end(), is_static_tensor);
}

// ---- the indexed dataflow graph -------------------------------------------------------

class GraphBuilder {
 public:
  std::vector<GraphNode> build(const Expr& body) {
    post_order_visit(
        body, [&](const Expr& e) { add(e); }, /*enter_functions=*/false);
    nodes_[index_.at(body.get())].used_outside = true;
    return std::move(nodes_);
  }

 private:
  void add(const Expr& e) {
    size_t id = nodes_.size();
    index_[e.get()] = id;
    nodes_.push_back(GraphNode{e, OpPattern::kOpaque, false, {}});
    if (const auto* call = as<CallNode>(e)) return add_call(id, *call);
    if (const auto* tuple = as<TupleNode>(e)) {
      bool fusable = is_tuple_of_static_tensors(e->checked_type());
      nodes_[id].pattern = fusable ? OpPattern::kTuple : OpPattern::kOpaque;
      for (const Expr& f : tuple->fields) use(f, id, fusable ? OpPattern::kInjective : OpPattern::kOpaque);
      return;
    }
    if (const auto* item = as<TupleGetItemNode>(e)) {
      // Only items of a tuple built in the graph: an op with several results stays whole.
      bool fusable = as<TupleNode>(item->tuple) && is_tuple_of_static_tensors(item->tuple->checked_type());
      nodes_[id].pattern = fusable ? OpPattern::kInjective : OpPattern::kOpaque;
      use(item->tuple, id, nodes_[id].pattern);
      return;
    }
    for (const Expr& c : children(e)) use(c, id, OpPattern::kOpaque);
  }

  void add_call(size_t id, const CallNode& call) {
    const OpDef* op = call.op();
    const Type& result = nodes_[id].expr->checked_type();
    // Calls of functions, data-dependent shapes and several results stay opaque.
    OpPattern pattern = op && is_static_tensor(result) ? op->pattern : OpPattern::kOpaque;
    nodes_[id].pattern = pattern;
    if (!op) use(call.callee, id, OpPattern::kOpaque);
    for (const Expr& arg : call.args) use(arg, id, edge_pattern(pattern, arg, result));
  }

  // A broadcast whose operand already has the result's shape is elementwise for that operand.
  static OpPattern edge_pattern(OpPattern op_pattern, const Expr& arg, const Type& result) {
    if (op_pattern != OpPattern::kBroadcast) return op_pattern;
    const auto* a = as_tensor(arg->checked_type());
    const auto* r = as_tensor(result);
    return a && r && a->shape == r->shape ? OpPattern::kElemwise : op_pattern;
  }

  void use(const Expr& producer, size_t consumer, OpPattern pattern) {
    auto it = index_.find(producer.get());
    if (it != index_.end()) nodes_[it->second].uses.push_back({consumer, pattern});
  }

  std::vector<GraphNode> nodes_;
  std::unordered_map<const ExprNode*, size_t> index_;
};

// ---- post-dominator tree ------------------------------------------------------------

struct DomNode {
  long parent = -1;  // -1: none (the output, or used outside)
  size_t depth = 1;
  OpPattern pattern = OpPattern::kOpaque;  // combined pattern of the paths to the parent
};

class PostDominators {
 public:
  explicit PostDominators(const std::vector<GraphNode>& nodes) : dom_(nodes.size()) {
    for (size_t i = nodes.size(); i-- > 0;) dom_[i] = compute(nodes[i]);
  }
  const DomNode& operator[](size_t i) const { return dom_[i]; }

 private:
  DomNode compute(const GraphNode& node) const {
    if (node.used_outside || node.uses.empty()) return DomNode{};
    OpPattern pattern = OpPattern::kElemwise;
    long parent = static_cast<long>(node.uses[0].consumer);
    for (const auto& u : node.uses) {
      pattern = combine(pattern, u.pattern);
      parent = common_ancestor(parent, static_cast<long>(u.consumer), pattern);
    }
    DomNode d;
    d.parent = parent;
    d.depth = parent < 0 ? 1 : dom_[parent].depth + 1;
    d.pattern = pattern;
    return d;
  }

  long common_ancestor(long a, long b, OpPattern& pattern) const {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      size_t da = dom_[a].depth, db = dom_[b].depth;
      if (da <= db) {
        pattern = combine(pattern, dom_[b].pattern);
        b = dom_[b].parent;
      }
      if (db <= da) {
        pattern = combine(pattern, dom_[a].pattern);
        a = dom_[a].parent;
      }
    }
    return a;
  }

  std::vector<DomNode> dom_;
};

// ---- grouping -----------------------------------------------------------------------

class Grouper {
 public:
  Grouper(const std::vector<GraphNode>& nodes, size_t max_group_size)
      : nodes_(nodes),
        dom_(nodes),
        parent_(nodes.size()),
        pattern_(nodes.size()),
        size_(nodes.size(), 1),
        computes_(nodes.size(), false),
        max_size_(max_group_size) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      parent_[i] = i;
      pattern_[i] = nodes[i].pattern;
      computes_[i] = computes_per_element(nodes[i]);
    }
  }

  void run() {
    for (int phase = 0; phase < 3; ++phase)
      for (size_t i = 0; i < nodes_.size(); ++i) try_fuse(i, phase);
  }

  // Each node's group, represented by the group's last node.
  std::vector<size_t> roots() {
    std::vector<size_t> last(nodes_.size(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i) last[find(i)] = std::max(last[find(i)], i);
    std::vector<size_t> out(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) out[i] = last[find(i)];
    return out;
  }

 private:
  size_t find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  OpPattern group_pattern(size_t i) { return pattern_[find(i)]; }

  void try_fuse(size_t i, int phase) {
    const DomNode& d = dom_[i];
    if (d.parent < 0 || group_pattern(i) == OpPattern::kOpaque) return;
    size_t sink = static_cast<size_t>(d.parent);
    if (size_[find(i)] + size_[find(sink)] > max_size_) return;
    if (phase == 2) return fuse_into_tuple(i, sink);
    if (find(i) == find(sink)) return;
    if (pattern_[sink] == OpPattern::kTuple) return;  // tuples absorb fields only in phase 2
    OpPattern p = group_pattern(i);
    if (p == OpPattern::kOutEWiseFusable) {
      if (phase == 0 && d.pattern == OpPattern::kElemwise)
        fuse_if(i, sink, [](OpPattern k, bool) { return k <= OpPattern::kBroadcast; });
    } else if (p <= OpPattern::kBroadcast) {
      if (d.pattern <= OpPattern::kInjective || d.pattern == OpPattern::kCommReduce)
        fuse_if(i, sink, [](OpPattern k, bool is_sink) {
          return is_sink ? (k <= OpPattern::kOutEWiseFusable) : k <= OpPattern::kInjective;
        });
    } else if (p == OpPattern::kInjective || p == OpPattern::kTuple) {
      if (phase == 1) fuse_if(i, sink, [](OpPattern k, bool) { return k <= OpPattern::kInjective; });
    }
  }

  // Injective fields fuse into a tuple once the tuple went into an injective group, if they only
  // move data or compute elementwise: a concatenation's loop recomputing an interpolation per
  // element (U-Net's resize) runs several times slower than the resize on its own.
  void fuse_into_tuple(size_t i, size_t sink) {
    if (group_pattern(i) > OpPattern::kInjective || computes_[find(i)]) return;
    OpPattern root = group_pattern(sink);
    if (root == OpPattern::kTuple) return;
    if (pattern_[sink] == OpPattern::kTuple && root <= OpPattern::kInjective)
      fuse_if(i, sink, [](OpPattern k, bool) { return k <= OpPattern::kInjective; });
  }

  // Fuses src and every node on its paths to sink into sink's group, when every node on
  // those paths (sink included) satisfies cond(pattern, is_sink). Iterative: the paths can
  // be long.
  template <class Cond>
  void fuse_if(size_t src, size_t sink, Cond cond) {
    std::vector<size_t> between = nodes_between(src, sink);
    for (size_t n : between)
      if (!cond(group_pattern(n), n == sink)) return;
    size_t target = find(sink);
    merge(src, target);
    for (size_t n : between) merge(n, target);
  }

  // Every node reachable from src's uses up to and including sink.
  std::vector<size_t> nodes_between(size_t src, size_t sink) const {
    std::vector<size_t> found, stack;
    std::unordered_set<size_t> seen;
    for (const auto& u : nodes_[src].uses) stack.push_back(u.consumer);
    while (!stack.empty()) {
      size_t n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      found.push_back(n);
      if (n == sink) continue;
      for (const auto& u : nodes_[n].uses) stack.push_back(u.consumer);
    }
    return found;
  }

  void merge(size_t child, size_t parent) {
    child = find(child);
    parent = find(parent);
    if (child == parent) return;
    parent_[child] = parent;
    size_[parent] += size_[child];
    // A tuple that joins its consumer's group is one more injective step of it (Relay keeps the
    // group's pattern too): counted as kTuple, the group would refuse the tuple's injective
    // fields in phase 2.
    const OpPattern joining = pattern_[child] == OpPattern::kTuple ? OpPattern::kInjective : pattern_[child];
    pattern_[parent] = combine(pattern_[parent], joining);
    computes_[parent] = computes_[parent] || computes_[child];
  }

  // An injective op that computes its elements (an interpolation), not just moves them.
  static bool computes_per_element(const GraphNode& node) {
    if (node.pattern != OpPattern::kInjective) return false;
    const auto* call = as<CallNode>(node.expr);
    const OpDef* op = call ? call->op() : nullptr;
    if (!op) return false;
    for (const char* moves : {"strided_slice", "reshape", "squeeze", "expand_dims", "transpose", "layout_transform",
                              "concatenate", "take", "split"})
      if (op->name == moves) return false;
    return true;
  }

  const std::vector<GraphNode>& nodes_;
  PostDominators dom_;
  std::vector<size_t> parent_;
  std::vector<OpPattern> pattern_;
  std::vector<size_t> size_;
  std::vector<bool> computes_;  // per group: some member is an injective op that computes
  size_t max_size_;
};

}  // namespace

Grouping group_for_fusion(const Expr& body, bool fuse, size_t max_group_size) {
  Grouping g;
  g.nodes = GraphBuilder().build(body);
  Grouper grouper(g.nodes, max_group_size);
  if (fuse) grouper.run();
  g.group_root = grouper.roots();
  return g;
}

}  // namespace kiln::fusion
