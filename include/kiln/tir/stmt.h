// Statements of the loop IR and PrimFunc, the unit the code generator turns into one C function.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kiln/tir/expr.h"

namespace kiln::tir {

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled };
const char* for_kind_name(ForKind kind);

struct StmtNode;
struct For;
struct BufferStore;
struct Allocate;
struct LetStmt;
struct IfThenElse;
struct SeqStmt;
struct Evaluate;

template <class T>
concept StmtAlternative = std::is_same_v<T, For> || std::is_same_v<T, BufferStore> || std::is_same_v<T, Allocate> ||
    std::is_same_v<T, LetStmt> || std::is_same_v<T, IfThenElse> || std::is_same_v<T, SeqStmt> ||
    std::is_same_v<T, Evaluate>;

class Stmt {
 public:
  Stmt() = default;
  template <StmtAlternative T>
  Stmt(T node);  // NOLINT: `Stmt s = For{...}`

  bool defined() const { return node_ != nullptr; }
  const StmtNode& node() const { return *node_; }
  template <StmtAlternative T>
  const T* as() const;
  bool same_as(const Stmt& other) const { return node_ == other.node_; }
  // An empty SeqStmt: the statement that does nothing.
  bool is_no_op() const;

 private:
  std::shared_ptr<const StmtNode> node_;
};

struct For {
  Var loop_var;
  PrimExpr min;
  PrimExpr extent;
  ForKind kind = ForKind::kSerial;
  Stmt body;
};

struct BufferStore {
  Buffer buffer;
  std::vector<PrimExpr> indices;
  PrimExpr value;
};

// Scratch memory for `buffer`, live while `body` runs.
struct Allocate {
  Buffer buffer;
  Stmt body;
};

struct LetStmt {
  Var var;
  PrimExpr value;
  Stmt body;
};

struct IfThenElse {
  PrimExpr condition;
  Stmt then_case;
  Stmt else_case;  // may be undefined
};

struct SeqStmt {
  std::vector<Stmt> stmts;
};

// Runs an expression for its side effect (an extern call).
struct Evaluate {
  PrimExpr value;
};

struct StmtNode : std::variant<For, BufferStore, Allocate, LetStmt, IfThenElse, SeqStmt, Evaluate> {
  using variant::variant;
};

template <StmtAlternative T>
Stmt::Stmt(T node) : node_(std::make_shared<const StmtNode>(std::move(node))) {}

template <StmtAlternative T>
const T* Stmt::as() const {
  return node_ ? std::get_if<T>(node_.get()) : nullptr;
}

inline Stmt no_op() { return SeqStmt{}; }
// Flattens nested sequences and drops no-ops; one statement stays itself.
Stmt seq(std::vector<Stmt> stmts);
Stmt store(Buffer buffer, std::vector<PrimExpr> indices, PrimExpr value);
Stmt for_loop(Var var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body);

// A function over buffers: inputs first, then outputs (the kernel ABI's argument order).
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
};

}  // namespace kiln::tir
