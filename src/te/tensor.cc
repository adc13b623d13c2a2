#include "kiln/te/tensor.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "kiln/tir/functor.h"

namespace kiln::te {

namespace {

// Loads in a body name buffers; this maps them back to the tensors that own them, so that a
// compute knows its inputs without the caller listing them.
struct BufferOwners {
  std::mutex mutex;
  std::unordered_map<const tir::BufferNode*, std::weak_ptr<const OperationNode>> owners;
};

BufferOwners& buffer_owners() {
  static BufferOwners* registry = new BufferOwners();  // outlives static tensors in tests
  return *registry;
}

Tensor register_op(std::shared_ptr<OperationNode> node) {
  Operation op(std::move(node));
  auto& registry = buffer_owners();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.owners[op->buffer.get()] = op;
  return Tensor(op);
}

void check_shape(const std::vector<int64_t>& shape, const std::string& name) {
  for (int64_t d : shape)
    check(d > 0, "te: tensor '", name, "' needs positive static dimensions, got ", shape_str(shape));
}

std::vector<Tensor> collect_inputs(const std::vector<PrimExpr>& exprs, const std::string& name) {
  std::vector<Tensor> inputs;
  for (const auto& e : exprs) {
    tir::visit_exprs(e, [&](const PrimExpr& x) {
      if (x.kind() != tir::ExprKind::kLoad) return;
      for (const auto& t : inputs)
        if (t.buffer() == x->buffer) return;
      Tensor t = tensor_of_buffer(x->buffer);
      if (!t.defined())
        throw Error(cat("te: compute '", name, "' reads buffer '", x->buffer->name, "', which is not a live tensor"));
      inputs.push_back(t);
    });
  }
  return inputs;
}

std::vector<IterVar> make_axes(const std::vector<int64_t>& shape) {
  static const char* names[] = {"i", "j", "k", "l", "m", "n"};
  std::vector<IterVar> axes;
  for (size_t d = 0; d < shape.size(); ++d)
    axes.push_back(make_iter_var(d < 6 ? names[d] : "ax" + std::to_string(d), shape[d], IterKind::kDataPar));
  return axes;
}

Indices axis_vars(const std::vector<IterVar>& axes) {
  Indices vars;
  for (const auto& a : axes) vars.push_back(a->var);
  return vars;
}

Reduce make_reduce(ReduceKind kind, PrimExpr source, std::vector<IterVar> axes, PrimExpr init) {
  check(source.defined(), "te: reduction of an undefined expression");
  check(!axes.empty(), "te: reduction needs at least one reduce axis");
  for (const auto& a : axes) check(a->kind == IterKind::kReduce, "te: '", a->var.name(), "' is not a reduce axis");
  return Reduce{kind, std::move(source), std::move(axes), std::move(init)};
}

}  // namespace

OperationNode::~OperationNode() {
  auto& registry = buffer_owners();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.owners.find(buffer.get());
  if (it != registry.owners.end() && it->second.expired()) registry.owners.erase(it);
}

IterVar make_iter_var(std::string name, int64_t extent, IterKind kind) {
  return IterVar(std::make_shared<const IterVarNode>(IterVarNode{Var(std::move(name)), extent, kind}));
}

IterVar reduce_axis(int64_t extent, std::string name) {
  check(extent > 0, "te: reduce axis '", name, "' needs a positive extent, got ", extent);
  return make_iter_var(std::move(name), extent, IterKind::kReduce);
}

Reduce sum(PrimExpr source, std::vector<IterVar> axes, PrimExpr init) {
  return make_reduce(ReduceKind::kSum, std::move(source), std::move(axes), std::move(init));
}
Reduce prod(PrimExpr source, std::vector<IterVar> axes, PrimExpr init) {
  return make_reduce(ReduceKind::kProd, std::move(source), std::move(axes), std::move(init));
}
Reduce max(PrimExpr source, std::vector<IterVar> axes, PrimExpr init) {
  return make_reduce(ReduceKind::kMax, std::move(source), std::move(axes), std::move(init));
}
Reduce min(PrimExpr source, std::vector<IterVar> axes, PrimExpr init) {
  return make_reduce(ReduceKind::kMin, std::move(source), std::move(axes), std::move(init));
}

PrimExpr reduce_identity(ReduceKind kind, DType dtype) {
  switch (kind) {
    case ReduceKind::kSum: return tir::make_const(dtype, 0);
    case ReduceKind::kProd: return tir::make_const(dtype, 1);
    case ReduceKind::kMax:
    case ReduceKind::kMin: {
      bool is_max = kind == ReduceKind::kMax;
      if (is_float(dtype))
        return tir::float_imm(
            is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity(), dtype);
      return dispatch_dtype(dtype, [&](auto zero) -> PrimExpr {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          return tir::int_imm(
              is_max ? int64_t(std::numeric_limits<T>::lowest()) : int64_t(std::numeric_limits<T>::max()), dtype);
        else
          return tir::bool_imm(!is_max);
      });
    }
  }
  return {};
}

PrimExpr reduce_combine(ReduceKind kind, PrimExpr accumulator, PrimExpr value) {
  switch (kind) {
    case ReduceKind::kSum: return accumulator + value;
    case ReduceKind::kProd: return accumulator * value;
    case ReduceKind::kMax:
    case ReduceKind::kMin: {
      const bool is_max = kind == ReduceKind::kMax;
      if (!is_float(value.dtype())) return is_max ? tir::max(accumulator, value) : tir::min(accumulator, value);
      // A NaN, once met, stays: max/min propagate NaN as the reference kernels do.
      const PrimExpr better = is_max ? tir::gt(value, accumulator) : tir::lt(value, accumulator);
      return tir::select(tir::logical_or(better, tir::ne(value, value)), value, accumulator);
    }
  }
  return {};
}

const std::string& Tensor::name() const { return op_->name; }
const std::vector<int64_t>& Tensor::shape() const { return op_->buffer->shape; }
DType Tensor::dtype() const { return op_->buffer->dtype; }
const tir::Buffer& Tensor::buffer() const { return op_->buffer; }

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
  check(defined(), "te: indexing an undefined tensor");
  if (indices.size() != ndim())
    throw Error(
        cat("te: tensor '", name(), "' of shape ", shape_str(shape()), " indexed with the wrong number of indices"))
        .expected(cat(ndim()), cat(indices.size()));
  return tir::load(buffer(), std::move(indices));
}

Tensor placeholder(std::vector<int64_t> shape, DType dtype, std::string name) {
  check_shape(shape, name);
  auto node = std::make_shared<OperationNode>();
  node->name = name;
  node->buffer = tir::make_buffer(std::move(name), dtype, std::move(shape));
  node->is_placeholder = true;
  return register_op(std::move(node));
}

Tensor compute_expr(std::vector<int64_t> shape, std::string name, const std::function<PrimExpr(const Indices&)>& fn) {
  check_shape(shape, name);
  auto node = std::make_shared<OperationNode>();
  node->axis = make_axes(shape);
  node->body = fn(axis_vars(node->axis));
  check(node->body.defined(), "te: compute '", name, "' returned an undefined expression");
  node->inputs = collect_inputs({node->body}, name);
  node->buffer = tir::make_buffer(name, node->body.dtype(), std::move(shape));
  node->name = std::move(name);
  return register_op(std::move(node));
}

Tensor compute_reduce(std::vector<int64_t> shape, std::string name, const std::function<Reduce(const Indices&)>& fn) {
  check_shape(shape, name);
  auto node = std::make_shared<OperationNode>();
  node->axis = make_axes(shape);
  Reduce r = fn(axis_vars(node->axis));
  DType dtype = r.source.dtype();
  node->body = r.source;
  node->reduce_axis = r.axes;
  node->reduce = r.kind;
  node->init = r.init.defined() ? tir::cast(dtype, r.init) : reduce_identity(r.kind, dtype);
  node->inputs = collect_inputs({node->body, node->init}, name);
  node->buffer = tir::make_buffer(name, dtype, std::move(shape));
  node->name = std::move(name);
  return register_op(std::move(node));
}

Tensor copy_compute(const Operation& op, std::string name) {
  auto node = std::make_shared<OperationNode>(*op);
  node->name = name;
  node->buffer = tir::make_buffer(std::move(name), op->buffer->dtype, op->buffer->shape);
  // Fresh axes, so that the two stages' loops are distinct variables.
  tir::VarMap renames;
  node->axis = make_axes(op->buffer->shape);
  for (size_t d = 0; d < node->axis.size(); ++d) renames[op->axis[d]->var.get()] = node->axis[d]->var;
  node->reduce_axis.clear();
  for (const auto& r : op->reduce_axis) {
    node->reduce_axis.push_back(make_iter_var(r->var.name(), r->extent, IterKind::kReduce));
    renames[r->var.get()] = node->reduce_axis.back()->var;
  }
  node->body = tir::substitute(op->body, renames);
  if (node->init.defined()) node->init = tir::substitute(op->init, renames);
  return register_op(std::move(node));
}

Tensor tensor_of_buffer(const tir::Buffer& buffer) {
  auto& registry = buffer_owners();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.owners.find(buffer.get());
  if (it == registry.owners.end()) return Tensor();
  return Tensor(it->second.lock());
}

}  // namespace kiln::te
