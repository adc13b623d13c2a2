// Schedules: how the loops of each tensor's computation are arranged. A stage per operation;
// primitives rewrite its loop structure (split, fuse, reorder), annotate loops (parallel,
// vectorize, unroll, tensorize) or move the computation (compute_inline, compute_at, cache_write).
// Stage/Schedule are mutable, unlike tensors and tir.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/support/error.h"
#include "kiln/te/tensor.h"
#include "kiln/tir/stmt.h"
#include "kiln/tir/tile_epilogue.h"

namespace kiln::te {

// A slice of a buffer handed to a tensor intrinsic: the element at `origin` is the slice's first.
struct BufferSlice {
  tir::Buffer buffer;
  std::vector<PrimExpr> origin;

  PrimExpr pointer() const { return tir::address_of(buffer, origin); }
  int64_t stride(size_t dim) const { return buffer->strides.at(dim); }
};

// A hand-written kernel that replaces a loop nest computing `desc` (a compute over placeholders).
// `emit` gets the input slices (in `desc`'s input order) and the output slice and returns the call.
// The kernel accumulates (C += ...) for reductions; the lowering emits the initialisation.
// `epilogue`, when the kernel has a variant that applies a bias and a clamp in registers, lets the
// lowering use it for a local tile (tir/tile_epilogue.h).
struct TensorIntrin {
  std::string name;
  Tensor desc;
  std::function<tir::Stmt(const std::vector<BufferSlice>& inputs, const BufferSlice& output)> emit;
  std::optional<tir::TileEpilogueCall> epilogue = std::nullopt;
};

struct IterVarRelation {
  enum class Kind : uint8_t { kSplit, kFuse } kind = Kind::kSplit;
  IterVar parent, outer, inner;  // split: parent -> (outer, inner)
  IterVar fused;                 // fuse: (outer, inner) -> fused
  int64_t factor = 0;            // split: inner extent, or the outer extent when by_nparts
  bool by_nparts = false;
};

class Schedule;

class Stage {
 public:
  // The tensor this stage produces (consumers read its buffer).
  const Tensor& tensor() const { return tensor_; }
  // The operation it runs: differs from tensor().op() after cache_write.
  const Operation& op() const { return op_; }
  const IterVar& axis(size_t i) const;
  const IterVar& reduce_axis(size_t i) const;
  const std::vector<IterVar>& leaf_iter_vars() const { return leaves_; }
  const std::vector<IterVarRelation>& relations() const { return relations_; }

  std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor);
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts);
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  // The given leaves take the positions they occupy, in the given order.
  void reorder(const std::vector<IterVar>& order);
  void parallel(const IterVar& leaf);
  void vectorize(const IterVar& leaf);
  void unroll(const IterVar& leaf);
  void compute_inline();
  void compute_at(Stage& parent, const IterVar& leaf);
  // Replaces the loops from `leaf` inward by the intrinsic.
  void tensorize(const IterVar& leaf, TensorIntrin intrin);

  enum class Attach : uint8_t { kRoot, kInline, kScope };
  Attach attach() const { return attach_; }
  const Stage* attach_stage() const { return attach_stage_; }
  const IterVar& attach_leaf() const { return attach_leaf_; }
  tir::ForKind leaf_kind(const IterVar& leaf) const;
  const TensorIntrin* tensorize_intrin() const { return tensorize_ ? &*tensorize_ : nullptr; }
  const IterVar& tensorize_leaf() const { return tensorize_leaf_; }
  bool is_placeholder() const { return op_->is_placeholder; }

 private:
  friend class Schedule;
  Stage(Tensor tensor, Operation op);
  void set_op(Operation op);
  size_t leaf_position(const IterVar& leaf, const char* primitive) const;
  Error error(const std::string& message) const;

  Tensor tensor_;
  Operation op_;
  std::vector<IterVar> leaves_;
  std::vector<IterVarRelation> relations_;
  std::unordered_map<const IterVarNode*, tir::ForKind> kinds_;
  Attach attach_ = Attach::kRoot;
  Stage* attach_stage_ = nullptr;
  IterVar attach_leaf_;
  std::optional<TensorIntrin> tensorize_;
  IterVar tensorize_leaf_;
};

class Schedule {
 public:
  // Stages for the outputs and every tensor they read, producers before consumers.
  explicit Schedule(std::vector<Tensor> outputs);
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;
  Schedule(Schedule&&) = default;

  Stage& operator[](const Tensor& tensor);
  const Stage& operator[](const Tensor& tensor) const;
  const std::vector<std::unique_ptr<Stage>>& stages() const { return stages_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  bool is_output(const Tensor& tensor) const;

  // Computes `tensor` into a new tensor `<name>.<scope>` and makes `tensor` a copy of it;
  // returns the new tensor, whose stage holds the original computation.
  Tensor cache_write(const Tensor& tensor, const std::string& scope = "local");

 private:
  void add_stages(const Tensor& tensor);
  Stage* find(const Tensor& tensor) const;

  std::vector<Tensor> outputs_;
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace kiln::te
