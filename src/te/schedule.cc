#include "kiln/te/schedule.h"

#include <algorithm>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::te {

Stage::Stage(Tensor tensor, Operation op) : tensor_(std::move(tensor)) { set_op(std::move(op)); }

void Stage::set_op(Operation op) {
  op_ = std::move(op);
  leaves_ = op_->axis;
  leaves_.insert(leaves_.end(), op_->reduce_axis.begin(), op_->reduce_axis.end());
  relations_.clear();
  kinds_.clear();
}

Error Stage::error(const std::string& message) const { return Error(cat("schedule of '", op_->name, "': ", message)); }

const IterVar& Stage::axis(size_t i) const {
  if (i >= op_->axis.size()) throw error("axis index out of range").expected(cat("< ", op_->axis.size()), cat(i));
  return op_->axis[i];
}

const IterVar& Stage::reduce_axis(size_t i) const {
  if (i >= op_->reduce_axis.size())
    throw error("reduce axis index out of range").expected(cat("< ", op_->reduce_axis.size()), cat(i));
  return op_->reduce_axis[i];
}

size_t Stage::leaf_position(const IterVar& leaf, const char* primitive) const {
  auto it = std::find(leaves_.begin(), leaves_.end(), leaf);
  if (it == leaves_.end())
    throw error(cat(primitive, ": '", leaf ? leaf->var.name() : "<null>", "' is not a current loop of this stage"));
  return static_cast<size_t>(it - leaves_.begin());
}

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor) {
  size_t pos = leaf_position(parent, "split");
  if (factor <= 0) throw error(cat("split of '", parent->var.name(), "' needs a positive factor, got ", factor));
  int64_t outer_extent = (parent->extent + factor - 1) / factor;
  IterVar outer = make_iter_var(parent->var.name() + "_outer", outer_extent, parent->kind);
  IterVar inner = make_iter_var(parent->var.name() + "_inner", factor, parent->kind);
  relations_.push_back({IterVarRelation::Kind::kSplit, parent, outer, inner, nullptr, factor, false});
  leaves_[pos] = outer;
  leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(pos) + 1, inner);
  return {outer, inner};
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, int64_t nparts) {
  size_t pos = leaf_position(parent, "split_nparts");
  if (nparts <= 0) throw error(cat("split of '", parent->var.name(), "' needs a positive nparts, got ", nparts));
  int64_t inner_extent = (parent->extent + nparts - 1) / nparts;
  IterVar outer = make_iter_var(parent->var.name() + "_outer", nparts, parent->kind);
  IterVar inner = make_iter_var(parent->var.name() + "_inner", inner_extent, parent->kind);
  relations_.push_back({IterVarRelation::Kind::kSplit, parent, outer, inner, nullptr, nparts, true});
  leaves_[pos] = outer;
  leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(pos) + 1, inner);
  return {outer, inner};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  size_t pos = leaf_position(outer, "fuse");
  if (pos + 1 >= leaves_.size() || leaves_[pos + 1] != inner)
    throw error(cat("fuse: '", inner->var.name(), "' must be the loop right inside '", outer->var.name(), "'"));
  if (outer->kind != inner->kind) throw error("fuse: cannot fuse a reduce axis with a data-parallel axis");
  IterVar fused =
      make_iter_var(outer->var.name() + "_" + inner->var.name() + "_fused", outer->extent * inner->extent, outer->kind);
  relations_.push_back({IterVarRelation::Kind::kFuse, nullptr, outer, inner, fused, 0, false});
  leaves_[pos] = fused;
  leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(pos) + 1);
  return fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  std::vector<size_t> positions;
  for (const auto& leaf : order) positions.push_back(leaf_position(leaf, "reorder"));
  std::vector<size_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw error("reorder: a loop is listed twice");
  for (size_t i = 0; i < order.size(); ++i) leaves_[sorted[i]] = order[i];
}

void Stage::parallel(const IterVar& leaf) {
  leaf_position(leaf, "parallel");
  if (leaf->kind == IterKind::kReduce) throw error(cat("parallel: '", leaf->var.name(), "' is a reduce axis"));
  kinds_[leaf.get()] = tir::ForKind::kParallel;
}

void Stage::vectorize(const IterVar& leaf) {
  leaf_position(leaf, "vectorize");
  // The C code marks vector loops as free of loop-carried dependences, which a reduction is not.
  if (leaf->kind == IterKind::kReduce) throw error(cat("vectorize: '", leaf->var.name(), "' is a reduce axis"));
  kinds_[leaf.get()] = tir::ForKind::kVectorized;
}

void Stage::unroll(const IterVar& leaf) {
  leaf_position(leaf, "unroll");
  kinds_[leaf.get()] = tir::ForKind::kUnrolled;
}

tir::ForKind Stage::leaf_kind(const IterVar& leaf) const {
  auto it = kinds_.find(leaf.get());
  return it == kinds_.end() ? tir::ForKind::kSerial : it->second;
}

void Stage::compute_inline() {
  if (op_->is_placeholder) throw error("compute_inline: a placeholder has no computation");
  if (op_->reduce) throw error("compute_inline: a reduction cannot be inlined");
  attach_ = Attach::kInline;
  attach_stage_ = nullptr;
}

void Stage::compute_at(Stage& parent, const IterVar& leaf) {
  if (op_->is_placeholder) throw error("compute_at: a placeholder has no computation");
  if (&parent == this) throw error("compute_at: a stage cannot be computed inside itself");
  parent.leaf_position(leaf, "compute_at");
  attach_ = Attach::kScope;
  attach_stage_ = &parent;
  attach_leaf_ = leaf;
}

void Stage::tensorize(const IterVar& leaf, TensorIntrin intrin) {
  leaf_position(leaf, "tensorize");
  if (!intrin.desc.defined() || !intrin.emit)
    throw error(cat("tensorize: intrinsic '", intrin.name, "' is incomplete"));
  tensorize_ = std::move(intrin);
  tensorize_leaf_ = leaf;
}

Schedule::Schedule(std::vector<Tensor> outputs) : outputs_(std::move(outputs)) {
  for (const auto& t : outputs_) {
    check(t.defined(), "schedule: undefined output tensor");
    add_stages(t);
  }
}

void Schedule::add_stages(const Tensor& tensor) {
  if (find(tensor)) return;
  for (const auto& input : tensor.op()->inputs) add_stages(input);
  stages_.push_back(std::unique_ptr<Stage>(new Stage(tensor, tensor.op())));
}

Stage* Schedule::find(const Tensor& tensor) const {
  for (const auto& s : stages_)
    if (s->tensor().same_as(tensor)) return s.get();
  return nullptr;
}

Stage& Schedule::operator[](const Tensor& tensor) {
  Stage* s = find(tensor);
  if (!s) throw Error(cat("schedule: tensor '", tensor.defined() ? tensor.name() : "<undefined>", "' is not in it"));
  return *s;
}

const Stage& Schedule::operator[](const Tensor& tensor) const { return const_cast<Schedule&>(*this)[tensor]; }

bool Schedule::is_output(const Tensor& tensor) const {
  return std::any_of(outputs_.begin(), outputs_.end(), [&](const Tensor& t) { return t.same_as(tensor); });
}

Tensor Schedule::cache_write(const Tensor& tensor, const std::string& scope) {
  Stage& stage = (*this)[tensor];
  if (stage.is_placeholder()) throw stage.error("cache_write: a placeholder is not computed");
  if (stage.attach() != Stage::Attach::kRoot || !stage.relations().empty())
    throw stage.error("cache_write must come before other primitives on the stage");
  Tensor cache = copy_compute(stage.op(), tensor.name() + "." + scope);

  // The original tensor becomes an element-wise copy of the cache, into the same buffer.
  auto copy = std::make_shared<OperationNode>();
  copy->name = tensor.name();
  copy->buffer = tensor.buffer();
  for (const auto& a : stage.op()->axis)
    copy->axis.push_back(make_iter_var(a->var.name(), a->extent, IterKind::kDataPar));
  std::vector<PrimExpr> indices;
  for (const auto& a : copy->axis) indices.push_back(a->var);
  copy->body = cache(indices);
  copy->inputs = {cache};
  stage.set_op(std::move(copy));

  auto pos = std::find_if(stages_.begin(), stages_.end(), [&](const auto& s) { return s.get() == &stage; });
  stages_.insert(pos, std::unique_ptr<Stage>(new Stage(cache, cache.op())));
  return cache;
}

}  // namespace kiln::te
