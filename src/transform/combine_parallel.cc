#include "transform/combine_parallel.h"

#include <algorithm>
#include <unordered_set>

#include "kiln/ir/op.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "kiln/transform/pass.h"

namespace kiln {

namespace {

using NodeSet = std::unordered_set<const ExprNode*>;
// Who uses each node: every parent, once per use (a function uses its body).
using Users = std::unordered_map<const ExprNode*, std::vector<const ExprNode*>>;

Users users_of(const Function& fn) {
  Users users;
  post_order_visit(fn, [&](const Expr& e) {
    for (const Expr& child : children(e)) users[child.get()].push_back(e.get());
  });
  return users;
}

const CallNode* op_call(const ExprNode* node) {
  if (!node || node->kind != ExprKind::kCall) return nullptr;
  const auto* call = static_cast<const CallNode*>(node);
  return call->op() ? call : nullptr;
}

// Elementwise and broadcast ops keep a branch's result aligned with its op's, so they can be
// joined behind it (Relay: pattern <= kBroadcast).
bool may_follow(const CallNode& call) {
  const OpDef& op = *call.op();
  return (op.pattern == OpPattern::kElemwise || op.pattern == OpPattern::kBroadcast) && !op.nondeterministic;
}

Branch make_branch(const CallNode& op, const Users& users) {
  Branch branch{&op};
  for (;;) {
    auto it = users.find(branch.back());
    if (it == users.end() || it->second.size() != 1) break;
    const CallNode* next = op_call(it->second[0]);
    if (!next || !may_follow(*next)) break;
    branch.push_back(next);
  }
  return branch;
}

// Whether one of `targets` is `e` or reachable from it.
bool reaches_any(const Expr& e, const NodeSet& targets) {
  NodeSet seen;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    Expr node = std::move(stack.back());
    stack.pop_back();
    if (targets.count(node.get())) return true;
    if (!seen.insert(node.get()).second) continue;
    for (Expr& child : children(node)) stack.push_back(std::move(child));
  }
  return false;
}

NodeSet ops_of(const Group& group) {
  NodeSet ops;
  for (const Branch& branch : group) ops.insert(branch[0]);
  return ops;
}

// The group without the branches whose op takes, besides the data, something computed from
// another branch's op: the joined op would depend on itself.
Group without_dependent_branches(const Group& group) {
  NodeSet ops = ops_of(group);
  Group kept;
  for (const Branch& branch : group) {
    const std::vector<Expr>& args = branch[0]->args;
    bool dependent = std::any_of(args.begin() + 1, args.end(), [&](const Expr& a) { return reaches_any(a, ops); });
    if (!dependent) kept.push_back(branch);
  }
  return kept;
}

// Whether the follow-on op reads a vector along an axis its attributes name (bias_add, prelu).
bool has_axis_attr(const CallNode& call) {
  const auto& specs = call.op()->attr_specs;
  return std::any_of(specs.begin(), specs.end(), [](const AttrSpec& s) { return s.name == "axis"; });
}

}  // namespace

ParallelOpCombiner::ParallelOpCombiner(std::string op_name, int64_t min_num_branches)
    : op_name_(std::move(op_name)), min_num_branches_(min_num_branches) {
  if (min_num_branches_ < 1)
    throw std::move(Error(cat("option min_num_branches of the combining of parallel ", op_name_, " out of range"))
                        .expected("at least 1", cat(min_num_branches_)));
}

IRModule ParallelOpCombiner::combine(const IRModule& mod) {
  IRModule out = map_functions(infer_types(mod), [&](const Function& fn) { return combine_function(fn); });
  return infer_types(out);
}

Function ParallelOpCombiner::combine_function(const Function& fn) const {
  if (fn->is_primitive()) return fn;
  NodeSubstitution substitution;
  for (const Group& group : find_groups(fn)) combine_branches(group, substitution);
  return substitution.empty() ? fn : as_function(substitute_nodes(fn, substitution));
}

// Calls of the op grouped by their data (args[0]), in the order they are first reached; the
// calls on one data go to the first group whose first call they can be combined with (Relay's
// BranchGroupFinder). Nested functions are left alone.
std::vector<Group> ParallelOpCombiner::find_groups(const Function& fn) const {
  Users users = users_of(fn);
  std::vector<const ExprNode*> data_order;
  std::unordered_map<const ExprNode*, std::vector<const CallNode*>> calls_on;
  post_order_visit(
      fn->body,
      [&](const Expr& e) {
        const CallNode* call = op_call(e.get());
        if (!call || call->op()->name != op_name_ || call->args.empty() || !is_supported_op(*call)) return;
        auto& calls = calls_on[call->args[0].get()];
        if (calls.empty()) data_order.push_back(call->args[0].get());
        calls.push_back(call);
      },
      /*enter_functions=*/false);
  std::vector<Group> groups;
  for (const ExprNode* data : data_order) {
    std::vector<Group> candidates;
    for (const CallNode* call : calls_on[data]) {
      auto it = std::find_if(candidates.begin(), candidates.end(),
                             [&](const Group& g) { return can_ops_be_combined(*g[0][0], *call); });
      if (it != candidates.end())
        it->push_back(make_branch(*call, users));
      else
        candidates.push_back({make_branch(*call, users)});
    }
    for (const Group& candidate : candidates) {
      Group group = without_dependent_branches(candidate);
      if (static_cast<int64_t>(group.size()) >= min_num_branches_) groups.push_back(std::move(group));
    }
  }
  return groups;
}

// One op for the group, then the follow-on calls level by level while they can be joined.
void ParallelOpCombiner::combine_branches(const Group& group, NodeSubstitution& substitution) const {
  SourceScope source(group[0][0]->source);
  Expr combined = make_combined_op(group);
  size_t depth = std::min_element(group.begin(), group.end(), [](const Branch& a, const Branch& b) {
                   return a.size() < b.size();
                 })->size();
  size_t level = 1;
  for (; level < depth; ++level) {
    const CallNode& call = *group[0][level];
    auto parent = static_cast<size_t>(std::find_if(call.args.begin(), call.args.end(),
                                                   [&](const Expr& a) { return a.get() == group[0][level - 1]; }) -
                                      call.args.begin());
    if (parent == call.args.size() || !check_level(group, level, parent)) break;
    combined = make_combined_call_from_following_ops(combined, group, level, parent);
  }
  update_group_output(combined, group, level - 1, substitution);
}

// Every branch has at `depth` a call of the same op and attributes, taking the call before
// it at `parent_index`, keeping its type, and with other arguments that can be joined and
// depend on no op of the group.
bool ParallelOpCombiner::check_level(const Group& group, size_t depth, size_t parent_index) const {
  const CallNode& first = *group[0][depth];
  NodeSet ops = ops_of(group);
  for (const Branch& branch : group) {
    const CallNode& call = *branch[depth];
    if (call.op() != first.op() || !(call.attrs == first.attrs) || call.args.size() != first.args.size() ||
        call.args[parent_index].get() != branch[depth - 1] || !call.checked_type() ||
        !type_equal(call.checked_type(), branch[depth - 1]->checked_type()))
      return false;
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (i == parent_index) continue;
      if (!is_arg_compatible(group, first, call, i) || reaches_any(call.args[i], ops)) return false;
    }
  }
  return true;
}

const TensorTypeNode* ParallelOpCombiner::tensor_type_of(const ExprNode& e) {
  return e.checked_type() ? as_tensor(e.checked_type()) : nullptr;
}

Expr ParallelOpCombiner::join(std::vector<Expr> fields, int64_t axis) {
  return call_op("concatenate", {make_tuple(std::move(fields))}, axis == 0 ? Attrs{} : Attrs{{"axis", axis}});
}

Expr ParallelOpCombiner::stack(std::vector<Expr> fields, int64_t axis) {
  return call_op("stack", {make_tuple(std::move(fields))}, axis == 0 ? Attrs{} : Attrs{{"axis", axis}});
}

int64_t ParallelOpConcatCombiner::output_channels(const CallNode& op) const {
  return tensor_type_of(op)->shape[static_cast<size_t>(channel_axis(op))];
}

Expr ParallelOpConcatCombiner::call_on_joined_weights(const Group& group, const std::string& count_attr) const {
  const CallNode& root = *group[0][0];
  std::vector<Expr> weights;
  int64_t channels = 0;
  for (const Branch& branch : group) {
    weights.push_back(branch[0]->args[1]);
    channels += output_channels(*branch[0]);
  }
  Attrs attrs = root.attrs;
  attrs.set(count_attr, channels);
  return make_call(root.callee, {root.args[0], join(std::move(weights), 0)}, std::move(attrs));
}

// -1 when the argument has no axis that lines up with the channel axis.
int64_t ParallelOpConcatCombiner::arg_join_axis(const Group& group, const CallNode& call, size_t index) const {
  const TensorTypeNode* arg = tensor_type_of(*call.args[index]);
  const TensorTypeNode* out = tensor_type_of(call);
  if (!arg || !out) return -1;
  int64_t channel = channel_axis(*group[0][0]);
  if (has_axis_attr(call)) {
    const Attrs attrs = call.op()->normalize(call.attrs);  // find() points into it
    const AttrValue* axis = attrs.find("axis");
    if (!axis || !axis->is_int()) return -1;
    int64_t along = axis->as_int() < 0 ? axis->as_int() + out->ndim() : axis->as_int();
    return arg->ndim() == 1 && along == channel ? 0 : -1;
  }
  int64_t axis = channel - out->ndim() + arg->ndim();
  return axis >= 0 ? axis : -1;
}

bool ParallelOpConcatCombiner::is_arg_compatible(const Group& group, const CallNode& a, const CallNode& b,
                                                 size_t index) const {
  int64_t axis = arg_join_axis(group, a, index);
  if (axis < 0 || axis != arg_join_axis(group, b, index)) return false;
  const TensorTypeNode& ta = *tensor_type_of(*a.args[index]);
  const TensorTypeNode& tb = *tensor_type_of(*b.args[index]);
  auto channel = static_cast<size_t>(channel_axis(*group[0][0]));
  if (ta.dtype != tb.dtype || ta.ndim() != tb.ndim() ||
      ta.shape[static_cast<size_t>(axis)] != tensor_type_of(a)->shape[channel] ||
      tb.shape[static_cast<size_t>(axis)] != tensor_type_of(b)->shape[channel])
    return false;
  for (size_t d = 0; d < ta.shape.size(); ++d)
    if (static_cast<int64_t>(d) != axis && (ta.shape[d] != tb.shape[d] || ta.shape[d] == kAnyDim)) return false;
  return true;
}

Expr ParallelOpConcatCombiner::make_combined_call_from_following_ops(const Expr& data, const Group& group, size_t depth,
                                                                     size_t parent_index) const {
  const CallNode& call = *group[0][depth];
  std::vector<Expr> args;
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (i == parent_index) {
      args.push_back(data);
      continue;
    }
    std::vector<Expr> fields;
    for (const Branch& branch : group) fields.push_back(branch[depth]->args[i]);
    args.push_back(join(std::move(fields), arg_join_axis(group, call, i)));
  }
  return make_call(call.callee, std::move(args), call.attrs);
}

// Branch k is the slice of its channels, [sum of the channels before it, + its own).
void ParallelOpConcatCombiner::update_group_output(const Expr& data, const Group& group, size_t depth,
                                                   NodeSubstitution& substitution) const {
  auto channel = static_cast<size_t>(channel_axis(*group[0][0]));
  int64_t start = 0;
  for (const Branch& branch : group) {
    int64_t channels = output_channels(*branch[0]);
    std::vector<int64_t> begin(channel, 0), end(channel, -1);
    begin.push_back(start);
    end.push_back(channels);
    start += channels;
    Attrs attrs{
        {"begin", begin}, {"end", end}, {"strides", std::vector<int64_t>(channel + 1, 1)}, {"slice_mode", "size"}};
    substitution[branch[depth]] = call_op("strided_slice", {data}, std::move(attrs));
  }
}

// Stacked, the arguments broadcast along the batch axis like the branches' did; an axis an
// op's attributes name would point elsewhere once the batch axis is in front.
bool ParallelOpBatchCombiner::is_arg_compatible(const Group&, const CallNode& a, const CallNode& b,
                                                size_t index) const {
  const TensorTypeNode* ta = tensor_type_of(*a.args[index]);
  const TensorTypeNode* out = tensor_type_of(a);
  return ta && out && !has_axis_attr(a) && ta->ndim() <= out->ndim() &&
         type_equal(a.args[index]->checked_type(), b.args[index]->checked_type());
}

Expr ParallelOpBatchCombiner::make_combined_call_from_following_ops(const Expr& data, const Group& group, size_t depth,
                                                                    size_t parent_index) const {
  const CallNode& call = *group[0][depth];
  int64_t rank = tensor_type_of(call)->ndim();
  std::vector<Expr> args;
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (i == parent_index) {
      args.push_back(data);
      continue;
    }
    std::vector<Expr> fields;
    for (const Branch& branch : group) {
      const Expr& arg = branch[depth]->args[i];
      int64_t missing = rank - tensor_type_of(*arg)->ndim();
      Attrs expand{{"axis", 0}};
      if (missing != 1) expand.set("num_newaxis", missing);
      fields.push_back(missing == 0 ? arg : call_op("expand_dims", {arg}, std::move(expand)));
    }
    args.push_back(stack(std::move(fields), 0));
  }
  return make_call(call.callee, std::move(args), call.attrs);
}

void ParallelOpBatchCombiner::update_group_output(const Expr& data, const Group& group, size_t depth,
                                                  NodeSubstitution& substitution) const {
  Expr pieces = call_op("split", {data}, Attrs{{"indices_or_sections", static_cast<int64_t>(group.size())}});
  for (size_t i = 0; i < group.size(); ++i)
    substitution[group[i][depth]] = call_op("squeeze", {make_tuple_get_item(pieces, static_cast<int>(i))},
                                            Attrs{{"axis", std::vector<int64_t>{0}}});
}

// Each node's result is memoised; a substituted node's result is that of what replaces it,
// which is itself substituted. A node met again while its own inputs are pending would be a
// cycle, which the grouping rules out.
Expr substitute_nodes(const Expr& root, const NodeSubstitution& substitution) {
  std::unordered_map<const ExprNode*, Expr> done;
  NodeSet expanded;
  auto inputs = [&](const Expr& e) {
    auto it = substitution.find(e.get());
    return it == substitution.end() ? children(e) : std::vector<Expr>{it->second};
  };
  std::vector<Expr> stack{root};
  while (!stack.empty()) {
    Expr e = stack.back();
    if (done.count(e.get())) {
      stack.pop_back();
      continue;
    }
    std::vector<Expr> kids = inputs(e);
    if (expanded.insert(e.get()).second) {
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
        if (done.count(it->get())) continue;
        if (expanded.count(it->get())) throw Error::bug("combining parallel ops made a cycle");
        stack.push_back(*it);
      }
      continue;
    }
    stack.pop_back();
    if (substitution.count(e.get())) {
      done[e.get()] = done.at(kids[0].get());
      continue;
    }
    std::vector<Expr> new_kids;
    for (const Expr& k : kids) new_kids.push_back(done.at(k.get()));
    SourceScope source(e->source.empty() ? current_source() : e->source);
    done[e.get()] = kids.empty() ? e : with_children(e, new_kids);
  }
  return done.at(root.get());
}

}  // namespace kiln
