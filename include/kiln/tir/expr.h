// Scalar expressions of the loop IR (tir). Index arithmetic is int64; comparisons are bool.
// Nodes are immutable and shared; a variable is identified by its node, not by its name.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime/dtype.h"

namespace kiln::tir {

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kVar,
  kAdd,
  kSub,
  kMul,
  kDiv,  // true division for floats, truncating for ints (like C)
  kFloorDiv,
  kFloorMod,
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,
  kOr,
  kNot,
  kSelect,      // operands: condition, true value, false value
  kCast,        // operands: value; dtype is the target
  kCall,        // pure math intrinsic (exp, sqrt ...) named by `name`
  kLoad,        // buffer[operands...]
  kAddressOf,   // &buffer[operands...]: a pointer for extern calls
  kExternCall,  // call of a C function named by `name` (side effects allowed), returns int32
};

// A dense array in memory: parameters of a PrimFunc and scratch allocations.
struct BufferNode {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements

  int64_t num_elements() const;
};
using Buffer = std::shared_ptr<const BufferNode>;

// Row-major strides unless `strides` is given.
Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {});

struct ExprNode;

class PrimExpr {
 public:
  PrimExpr() = default;
  PrimExpr(int value);      // NOLINT: int64 immediate, so that `i * 4 + 1` reads naturally
  PrimExpr(int64_t value);  // NOLINT
  explicit PrimExpr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const ExprNode& operator*() const { return *node_; }
  ExprKind kind() const;
  DType dtype() const;
  bool same_as(const PrimExpr& other) const { return node_ == other.node_; }

  bool is_int_imm() const;
  bool is_const_int(int64_t value) const;

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
  ExprKind kind = ExprKind::kIntImm;
  DType dtype = DType::kInt64;
  int64_t int_value = 0;           // kIntImm (also bool immediates: 0/1)
  double float_value = 0;          // kFloatImm
  std::string name;                // kVar, kCall, kExternCall
  std::vector<PrimExpr> operands;  // sub-expressions, or indices for kLoad/kAddressOf
  Buffer buffer;                   // kLoad, kAddressOf
};

// A variable (loop index, let binding). Copies name the same variable.
class Var : public PrimExpr {
 public:
  Var() = default;
  explicit Var(std::string name, DType dtype = DType::kInt64);
  // The variable held by `e`; throws when `e` is not a variable.
  static Var from(const PrimExpr& e);
  const std::string& name() const { return get()->name; }

 private:
  explicit Var(const PrimExpr& e) : PrimExpr(e) {}
};

// Constructors. Binary ops need equal dtypes, except that an immediate adopts the other side's dtype.
PrimExpr int_imm(int64_t value, DType dtype = DType::kInt64);
PrimExpr float_imm(double value, DType dtype = DType::kFloat32);
PrimExpr bool_imm(bool value);
// An immediate of `dtype` holding `value` (int or float kind chosen by dtype).
PrimExpr make_const(DType dtype, double value);
PrimExpr binary(ExprKind kind, PrimExpr a, PrimExpr b);
PrimExpr add(PrimExpr a, PrimExpr b);
PrimExpr sub(PrimExpr a, PrimExpr b);
PrimExpr mul(PrimExpr a, PrimExpr b);
PrimExpr div(PrimExpr a, PrimExpr b);
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
PrimExpr eq(PrimExpr a, PrimExpr b);
PrimExpr ne(PrimExpr a, PrimExpr b);
PrimExpr lt(PrimExpr a, PrimExpr b);
PrimExpr le(PrimExpr a, PrimExpr b);
PrimExpr gt(PrimExpr a, PrimExpr b);
PrimExpr ge(PrimExpr a, PrimExpr b);
PrimExpr logical_and(PrimExpr a, PrimExpr b);
PrimExpr logical_or(PrimExpr a, PrimExpr b);
PrimExpr logical_not(PrimExpr a);
PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);
PrimExpr cast(DType dtype, PrimExpr value);
// Math intrinsic: exp exp2 log log2 log10 sqrt rsqrt tanh sigmoid erf pow abs fabs floor ceil round trunc
// sin cos tan atan fmod. Throws kiln::Error for unknown names or wrong argument counts.
PrimExpr call(const std::string& name, std::vector<PrimExpr> args);
bool is_intrinsic(const std::string& name);
PrimExpr load(Buffer buffer, std::vector<PrimExpr> indices);
PrimExpr address_of(Buffer buffer, std::vector<PrimExpr> indices);
// The element offset of `indices` into `buffer` through its strides, unsimplified.
PrimExpr flat_offset(const Buffer& buffer, const std::vector<PrimExpr>& indices);
PrimExpr extern_call(std::string function, std::vector<PrimExpr> args);

inline PrimExpr operator+(PrimExpr a, PrimExpr b) { return add(std::move(a), std::move(b)); }
inline PrimExpr operator-(PrimExpr a, PrimExpr b) { return sub(std::move(a), std::move(b)); }
inline PrimExpr operator*(PrimExpr a, PrimExpr b) { return mul(std::move(a), std::move(b)); }
inline PrimExpr operator/(PrimExpr a, PrimExpr b) { return div(std::move(a), std::move(b)); }
inline PrimExpr operator-(PrimExpr a) {
  PrimExpr zero = make_const(a.dtype(), 0);  // before `a` is moved: argument order is unspecified
  return sub(std::move(zero), std::move(a));
}

// Same node kind with other operands (returns `e` itself when nothing changed).
PrimExpr with_operands(const PrimExpr& e, std::vector<PrimExpr> operands);
PrimExpr with_buffer(const PrimExpr& e, Buffer buffer, std::vector<PrimExpr> indices);

// Structural equality; variables and buffers compare by identity.
bool expr_equal(const PrimExpr& a, const PrimExpr& b);

const char* kind_name(ExprKind kind);
bool is_comparison(ExprKind kind);

}  // namespace kiln::tir
