// Horizontal fusion, shared by CombineParallelConv2D, CombineParallelDense and
// CombineParallelBatchMatmul (Relay's ParallelOpCombiner). Calls of one op that take the same
// data and could be computed as one call are grouped; each brings its branch, the chain of
// elementwise and broadcast calls that follow it, each the only user of the one before. A
// group of at least min_num_branches branches becomes one call on joined weights; the
// follow-on calls are joined level by level while every branch has the same op and attributes
// there with arguments that can be joined; each branch's last joined call is then replaced by
// its part of the joined result. Branches whose weights or follow-on arguments depend on
// another branch of the group stay out of it, since joining them would make a cycle.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/expr.h"
#include "kiln/ir/module.h"

namespace kiln {

// The op's call first, then each follow-on call.
using Branch = std::vector<const CallNode*>;
using Group = std::vector<Branch>;
// What replaces a node (keyed by the original node).
using NodeSubstitution = std::unordered_map<const ExprNode*, Expr>;

class ParallelOpCombiner {
 public:
  virtual ~ParallelOpCombiner() = default;
  // Types the module, combines the groups of every function, and types the result.
  IRModule combine(const IRModule& mod);

 protected:
  ParallelOpCombiner(std::string op_name, int64_t min_num_branches);

  // Whether a call of the op may be combined at all.
  virtual bool is_supported_op(const CallNode& call) const = 0;
  // Whether two supported calls on the same data can be computed as one.
  virtual bool can_ops_be_combined(const CallNode& a, const CallNode& b) const = 0;
  // The one call computing the op of every branch.
  virtual Expr make_combined_op(const Group& group) const = 0;
  // Whether argument `index` of the follow-on calls a and b (same op and attributes, in two
  // branches of `group`) can be joined; it is not the one the branches come through.
  virtual bool is_arg_compatible(const Group& group, const CallNode& a, const CallNode& b, size_t index) const = 0;
  // The follow-on calls at `depth` as one call on the joined result `data`.
  virtual Expr make_combined_call_from_following_ops(const Expr& data, const Group& group, size_t depth,
                                                     size_t parent_index) const = 0;
  // Records what replaces each branch's call at `depth`: its part of the joined `data`.
  virtual void update_group_output(const Expr& data, const Group& group, size_t depth,
                                   NodeSubstitution& substitution) const = 0;

  // The checked tensor type of `e`, nullptr when it has none.
  static const TensorTypeNode* tensor_type_of(const ExprNode& e);
  // concatenate / stack of `fields` along `axis`; axis 0 is left to its default, as Relay
  // prints it.
  static Expr join(std::vector<Expr> fields, int64_t axis);
  static Expr stack(std::vector<Expr> fields, int64_t axis);

 private:
  Function combine_function(const Function& fn) const;
  std::vector<Group> find_groups(const Function& fn) const;
  void combine_branches(const Group& group, NodeSubstitution& substitution) const;
  bool check_level(const Group& group, size_t depth, size_t parent_index) const;

  std::string op_name_;
  int64_t min_num_branches_;
};

// Joins the weights along the channel axis of the op's result (the axis with one entry per
// output channel) and cuts each branch out with strided_slice (slice_mode="size").
// Follow-on arguments are joined along the axis that lines up with the channel axis: they must
// have one entry per channel of their branch there, and equal extents elsewhere; bias_add and
// prelu's vector along the channel axis is joined along its only axis.
class ParallelOpConcatCombiner : public ParallelOpCombiner {
 protected:
  using ParallelOpCombiner::ParallelOpCombiner;
  // The channel axis of the result of a supported call.
  virtual int64_t channel_axis(const CallNode& op) const = 0;
  // The number of output channels of a supported call (static).
  int64_t output_channels(const CallNode& op) const;
  // The group's root call on the branches' weights (argument 1) joined along axis 0, with
  // `count_attr` (conv2d's channels, dense's units) set to the joined output channels.
  Expr call_on_joined_weights(const Group& group, const std::string& count_attr) const;

  bool is_arg_compatible(const Group& group, const CallNode& a, const CallNode& b, size_t index) const override;
  Expr make_combined_call_from_following_ops(const Expr& data, const Group& group, size_t depth,
                                             size_t parent_index) const override;
  void update_group_output(const Expr& data, const Group& group, size_t depth,
                           NodeSubstitution& substitution) const override;

 private:
  // The axis of argument `index` of follow-on `call` along which the branches' are joined.
  int64_t arg_join_axis(const Group& group, const CallNode& call, size_t index) const;
};

// Stacks the branches' arguments into a batch and computes them as one batched call; each
// branch is split out of the batch axis and squeezed. Follow-on arguments must have equal
// types across the branches; each is given the rank of the result before being stacked.
class ParallelOpBatchCombiner : public ParallelOpCombiner {
 protected:
  using ParallelOpCombiner::ParallelOpCombiner;

  bool is_arg_compatible(const Group& group, const CallNode& a, const CallNode& b, size_t index) const override;
  Expr make_combined_call_from_following_ops(const Expr& data, const Group& group, size_t depth,
                                             size_t parent_index) const override;
  void update_group_output(const Expr& data, const Group& group, size_t depth,
                           NodeSubstitution& substitution) const override;
};

// `root` with every node of `substitution` replaced, also inside what replaces another node
// (a group's data may be a part of another group's result). Iterative, keeps sharing.
Expr substitute_nodes(const Expr& root, const NodeSubstitution& substitution);

}  // namespace kiln
