// Expressions of the graph IR. Nodes are immutable and shared through shared_ptr, so a
// sub-expression used twice is one node (a DAG), and rewriting copies only what changes.
// The one mutable field is the checked type that InferType caches on each node; it is a
// function of the node's structure, so sharing a node between modules is safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/ir/type.h"
#include "kiln/runtime/attrs.h"
#include "kiln/runtime/ndarray.h"

namespace kiln {

struct OpDef;

enum class ExprKind : uint8_t {
  kVar,
  kGlobalVar,
  kConstant,
  kOp,
  kCall,
  kTuple,
  kTupleGetItem,
  kFunction,
  kLet,
  kIf,
  kLoop
};

// The source new nodes record now (see SourceScope below).
const std::string& current_source();

class ExprNode {
 public:
  virtual ~ExprNode() = default;
  const ExprKind kind;
  // The model node this one was made for (an ONNX node's name, a line of IR text), "" when
  // none: errors raised long after import name it. Not part of the node's structure.
  const std::string source;

  // Null until InferType has visited the node.
  const Type& checked_type() const { return checked_type_; }
  void set_checked_type(Type t) const { checked_type_ = std::move(t); }

 protected:
  explicit ExprNode(ExprKind k) : kind(k), source(current_source()) {}

 private:
  mutable Type checked_type_;
};
using Expr = std::shared_ptr<const ExprNode>;

// A local variable: function parameter or let binder. Identity is the node, not the name.
class VarNode : public ExprNode {
 public:
  VarNode(std::string n, Type t) : ExprNode(ExprKind::kVar), name(std::move(n)), type_annotation(std::move(t)) {}
  const std::string name;
  const Type type_annotation;  // may be null for let binders
};
using Var = std::shared_ptr<const VarNode>;

// A reference to a function of the module, by name.
class GlobalVarNode : public ExprNode {
 public:
  explicit GlobalVarNode(std::string n) : ExprNode(ExprKind::kGlobalVar), name(std::move(n)) {}
  const std::string name;
};
using GlobalVar = std::shared_ptr<const GlobalVarNode>;

class ConstantNode : public ExprNode {
 public:
  explicit ConstantNode(NDArray d) : ExprNode(ExprKind::kConstant), data(std::move(d)) {}
  const NDArray data;
};

// An operator, as the callee of a Call. One node per registered op.
class OpNode : public ExprNode {
 public:
  explicit OpNode(const OpDef* d) : ExprNode(ExprKind::kOp), def(d) {}
  const OpDef* const def;
  const std::string& name() const;
};

class CallNode : public ExprNode {
 public:
  CallNode(Expr c, std::vector<Expr> a, Attrs at)
      : ExprNode(ExprKind::kCall), callee(std::move(c)), args(std::move(a)), attrs(std::move(at)) {}
  const Expr callee;  // OpNode, GlobalVar, Var or Function
  const std::vector<Expr> args;
  const Attrs attrs;  // as written; defaults are filled in by OpDef::normalize
  // The op definition when the callee is an op, else nullptr.
  const OpDef* op() const;
};

class TupleNode : public ExprNode {
 public:
  explicit TupleNode(std::vector<Expr> f) : ExprNode(ExprKind::kTuple), fields(std::move(f)) {}
  const std::vector<Expr> fields;
};

class TupleGetItemNode : public ExprNode {
 public:
  TupleGetItemNode(Expr t, int i) : ExprNode(ExprKind::kTupleGetItem), tuple(std::move(t)), index(i) {}
  const Expr tuple;
  const int index;
};

class FunctionNode : public ExprNode {
 public:
  FunctionNode(std::vector<Var> p, Expr b, Type r, Attrs a)
      : ExprNode(ExprKind::kFunction),
        params(std::move(p)),
        body(std::move(b)),
        ret_type(std::move(r)),
        attrs(std::move(a)) {}
  const std::vector<Var> params;
  const Expr body;
  const Type ret_type;  // annotation, may be null
  const Attrs attrs;    // e.g. Primitive=1, Inline=1
  bool is_primitive() const;
};
using Function = std::shared_ptr<const FunctionNode>;

class LetNode : public ExprNode {
 public:
  LetNode(Var v, Expr val, Expr b)
      : ExprNode(ExprKind::kLet), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const Var var;
  const Expr value;
  const Expr body;
};

class IfNode : public ExprNode {
 public:
  IfNode(Expr c, Expr t, Expr e)
      : ExprNode(ExprKind::kIf), cond(std::move(c)), then_branch(std::move(t)), else_branch(std::move(e)) {}
  const Expr cond;
  const Expr then_branch;
  const Expr else_branch;
};

// A loop (ONNX Loop, and Scan through it): `body` runs while the iteration number is below
// `trip_count` (an int64 scalar) and the condition (a bool scalar, `cond` at first) holds.
// body(iteration, cond, carried...) -> (cond, carried..., scans...); the loop's value is the
// tuple (final carried..., scans stacked along a new axis 0). Both operands are always
// present: the frontend writes an absent trip count as INT64_MAX and an absent condition as
// True. The body is a child (a function whose free variables read the enclosing scope).
class LoopNode : public ExprNode {
 public:
  LoopNode(Expr trip, Expr c, std::vector<Expr> init, Function b)
      : ExprNode(ExprKind::kLoop),
        trip_count(std::move(trip)),
        cond(std::move(c)),
        inits(std::move(init)),
        body(std::move(b)) {}
  const Expr trip_count;
  const Expr cond;
  const std::vector<Expr> inits;  // initial carried values
  const Function body;
};

// While one is alive, nodes made on this thread record `name` as their source (the
// frontend sets it per ONNX node, the parser per line, rewriters per node they rewrite).
// Scopes nest.
class SourceScope {
 public:
  explicit SourceScope(std::string name);
  ~SourceScope();
  SourceScope(const SourceScope&) = delete;
  SourceScope& operator=(const SourceScope&) = delete;

 private:
  std::string saved_;
};
// Downcast: nullptr when `e` is of another kind.
template <class T>
const T* as(const Expr& e);

// Constructors.
Var make_var(std::string name, Type type = nullptr);
GlobalVar make_global_var(std::string name);
Expr make_constant(NDArray data);
// The shared OpNode of a registered op; throws kiln::Error for an unknown name.
Expr op_expr(const std::string& op_name);
Expr make_call(Expr callee, std::vector<Expr> args, Attrs attrs = {});
// Call of a registered op by name: call_op("nn.relu", {x}).
Expr call_op(const std::string& op_name, std::vector<Expr> args, Attrs attrs = {});
// The same with the op's declared attribute struct: call_op("nn.leaky_relu", {x},
// LeakyReluAttrs{.alpha = 0.2}).
template <class T>
requires requires(T& t, attrs_detail::Writer& w) { t.visit(w); }
Expr call_op(const std::string& op_name, std::vector<Expr> args, const T& attrs) {
  return call_op(op_name, std::move(args), attrs_to(attrs));
}
Expr make_tuple(std::vector<Expr> fields);
Expr make_tuple_get_item(Expr tuple, int index);
Function make_function(std::vector<Var> params, Expr body, Type ret_type = nullptr, Attrs attrs = {});
Expr make_let(Var var, Expr value, Expr body);
Expr make_if(Expr cond, Expr then_branch, Expr else_branch);
Expr make_loop(Expr trip_count, Expr cond, std::vector<Expr> inits, Function body);

// The direct sub-expressions, in evaluation order. Var binders of Let and Function
// parameters are not children; an OpNode callee is not a child.
std::vector<Expr> children(const Expr& e);
// The same node with new children (in the order children() gives); returns `e` itself
// when nothing changed.
Expr with_children(const Expr& e, const std::vector<Expr>& new_children);

template <class T>
const T* as(const Expr& e) {
  constexpr ExprKind k = std::is_same_v<T, VarNode>            ? ExprKind::kVar
                         : std::is_same_v<T, GlobalVarNode>    ? ExprKind::kGlobalVar
                         : std::is_same_v<T, ConstantNode>     ? ExprKind::kConstant
                         : std::is_same_v<T, OpNode>           ? ExprKind::kOp
                         : std::is_same_v<T, CallNode>         ? ExprKind::kCall
                         : std::is_same_v<T, TupleNode>        ? ExprKind::kTuple
                         : std::is_same_v<T, TupleGetItemNode> ? ExprKind::kTupleGetItem
                         : std::is_same_v<T, FunctionNode>     ? ExprKind::kFunction
                         : std::is_same_v<T, LetNode>          ? ExprKind::kLet
                         : std::is_same_v<T, IfNode>           ? ExprKind::kIf
                                                               : ExprKind::kLoop;
  return e && e->kind == k ? static_cast<const T*>(e.get()) : nullptr;
}

// Typed handles from an Expr known to be of that kind (nullptr otherwise).
Var as_var(const Expr& e);
Function as_function(const Expr& e);
GlobalVar as_global_var(const Expr& e);

}  // namespace kiln
