// Relay text printer.
//
// Each printed unit (a def, or one expression) is printed in three passes, all with
// explicit stacks so that long chains need no C++ recursion:
//  1. analysis: the order of the DAG's nodes, use counts, and the scope of every node. Function
//     bodies, if branches and lets that are not in tail position open scopes; a node is
//     bound (`%N = ...;`) in the innermost scope enclosing all its uses, like Relay.
//  2. numbering: %N in the order Relay assigns them, a nested function's bindings before
//     the binding of the function itself.
//  3. text, in reading order (variable names and metadata indices are given out there).
#include "kiln/ir/printer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "ir/text_format.h"
#include "kiln/ir/op.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {

bool is_atomic(const ExprNode& e) {
  return e.kind == ExprKind::kVar || e.kind == ExprKind::kGlobalVar || e.kind == ExprKind::kConstant ||
         e.kind == ExprKind::kOp;
}

template <class T>
const T& node_as(const ExprNode* e) {
  return *static_cast<const T*>(e);
}

// Constants too large for a literal, in order of first appearance in the printed text.
class MetaTable {
 public:
  size_t index_of(const ExprNode* constant) {
    auto [it, added] = index_.try_emplace(constant, constants_.size());
    if (added) constants_.push_back(node_as<ConstantNode>(constant).data);
    return it->second;
  }

  // The #[metadata] section (starting with a newline), or "" when no constant needs it.
  // Data is the raw little-endian bytes in base64.
  std::string section() const {
    if (constants_.empty()) return "";
    std::string out = "\n#[metadata]\n{\"relay.Constant\": [\n";
    for (size_t i = 0; i < constants_.size(); ++i) {
      const NDArray& a = constants_[i];
      nlohmann::ordered_json entry;
      entry["dtype"] = std::string(dtype_name(a.dtype()));
      entry["shape"] = a.shape();
      entry["data"] = text::base64_encode(a.raw(), a.nbytes());
      out += "  " + entry.dump() + (i + 1 < constants_.size() ? ",\n" : "\n");
    }
    out += "]}\n";
    return out;
  }

 private:
  std::unordered_map<const ExprNode*, size_t> index_;
  std::vector<NDArray> constants_;
};

struct Event {
  Expr node;
  bool let_line;  // the `let %x = value;` line of a Let (else: the node's own binding)
};

struct ScopeData {
  int parent = -1;
  int depth = 0;
  const ExprNode* result = nullptr;
  std::vector<const Event*> events;  // bindings and let lines, in print order
};

struct NodeInfo {
  int uses = 0;
  int scope = -1;
  bool entered = false;
  bool evented = false;
  bool bound = false;
  bool flattened_let = false;  // a tail Let: its let line and body continue the enclosing sequence
  bool inline_at_let = false;  // a let value printed inside its let line
  int let_scope = -1;          // Let: the scope holding its let line
  int64_t number = -1;
  std::vector<int> own_scopes;  // Function: body; If: then, else; non-tail Let: its block
};

class UnitPrinter {
 public:
  UnitPrinter(const PrintOptions& opts, MetaTable& meta) : opts_(opts), meta_(meta) {}

  // `def_name` non-empty prints a root function as `def @name(...)`.
  std::string print(const Expr& root, const std::string& def_name) {
    root_ = root;
    def_name_ = def_name;
    analyse();
    number();
    return emit();
  }

 private:
  // ---- pass 1: analysis ----
  void analyse() {
    order_events();
    assign_scopes();
    mark_bindings();
    for (const Event& ev : events_) {
      const NodeInfo& ni = info_[ev.node.get()];
      if (ev.let_line)
        scopes_[ni.let_scope].events.push_back(&ev);
      else if (ni.bound)
        scopes_[ni.scope].events.push_back(&ev);
    }
  }

  // Events come in Relay's order: a node's children are all expanded (their own children
  // bound) before any of them is bound, and a call's arguments come before its callee.
  // So `add(multiply(%x, s), add(multiply(n, s), %y))` binds s, n, the inner multiply and
  // only then both operands, as TVM prints it.
  void order_events() {
    struct Frame {
      Expr node;
      std::vector<Expr> kids;
      size_t next = 0;
      int let_phase = 0;  // Let: 0 value, 1 body, 2 done
    };
    std::vector<Frame> stack;
    auto enter = [&](const Expr& e) {
      NodeInfo& ni = info_[e.get()];
      if (ni.entered) return;
      ni.entered = true;
      note_var_names(e);
      for (const auto& k : children(e)) info_[k.get()].uses++;
      stack.push_back({e, expansion_order(e)});
    };
    auto bind_event = [&](const Expr& e) {
      NodeInfo& ni = info_[e.get()];
      if (ni.evented) return;
      ni.evented = true;
      events_.push_back({e, false});
    };
    info_[root_.get()].uses = 1;  // the unit itself uses its root
    enter(root_);
    while (!stack.empty()) {
      Frame& f = stack.back();  // enter() may reallocate the stack: `f` is not used after it
      if (const auto* let = as<LetNode>(f.node)) {
        // The value, then the let line, then the body that may use the variable.
        if (f.let_phase == 0) {
          f.let_phase = 1;
          enter(let->value);
        } else if (f.let_phase == 1) {
          f.let_phase = 2;
          bind_event(let->value);
          events_.push_back({f.node, true});
          enter(let->body);
        } else {
          bind_event(let->body);
          stack.pop_back();
        }
      } else if (f.next < f.kids.size()) {
        Expr kid = f.kids[f.next++];
        enter(kid);
      } else {
        std::vector<Expr> kids = std::move(f.kids);
        stack.pop_back();
        for (const auto& k : kids) bind_event(k);
      }
    }
    bind_event(root_);
  }

  // Which nodes get a `%N = ...;` line: every non-atomic node except tail lets, let values
  // written inside their let line, and a scope's result when nothing else uses it.
  void mark_bindings() {
    for (auto& [node, ni] : info_) {
      if (node->kind != ExprKind::kLet) continue;
      const ExprNode* value = node_as<LetNode>(node).value.get();
      NodeInfo& vi = info_[value];
      vi.inline_at_let = !is_atomic(*value) && vi.uses == 1 && vi.scope == ni.let_scope;
    }
    for (auto& [node, ni] : info_)
      ni.bound = !is_atomic(*node) && !ni.flattened_let && !ni.inline_at_let &&
                 !(scopes_[ni.scope].result == node && ni.uses == 1);
  }

  // Children in Relay's printing order: a call's arguments before its callee.
  static std::vector<Expr> expansion_order(const Expr& e) {
    std::vector<Expr> kids = children(e);
    if (const auto* call = as<CallNode>(e); call && call->callee->kind != ExprKind::kOp)
      std::rotate(kids.begin(), kids.begin() + 1, kids.end());
    return kids;
  }

  void note_var_names(const Expr& e) {
    if (const auto* v = as<VarNode>(e)) raw_names_.insert(v->name);
    if (const auto* f = as<FunctionNode>(e))
      for (const auto& p : f->params) raw_names_.insert(p->name);
    if (const auto* l = as<LetNode>(e)) raw_names_.insert(l->var->name);
  }

  int new_scope(int parent, const ExprNode* result) {
    ScopeData s;
    s.parent = parent;
    s.depth = parent < 0 ? 0 : scopes_[parent].depth + 1;
    s.result = result;
    scopes_.push_back(std::move(s));
    return static_cast<int>(scopes_.size()) - 1;
  }

  int common_scope(int a, int b) const {
    while (a != b) {
      if (scopes_[a].depth >= scopes_[b].depth)
        a = scopes_[a].parent;
      else
        b = scopes_[b].parent;
    }
    return a;
  }

  // Every node's event follows its children's, so in reverse event order users come
  // before their children and a node's scope (the common scope of its uses) is final
  // when it is reached.
  void assign_scopes() {
    new_scope(-1, root_.get());
    info_[root_.get()].scope = 0;
    auto use_in = [&](const Expr& child, int scope) {
      NodeInfo& ci = info_[child.get()];
      ci.scope = ci.scope < 0 ? scope : common_scope(ci.scope, scope);
    };
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (it->let_line) continue;
      const Expr& e = it->node;
      NodeInfo& ni = info_[e.get()];
      int s = ni.scope;
      if (const auto* f = as<FunctionNode>(e)) {
        int body = new_scope(s, f->body.get());
        ni.own_scopes = {body};
        use_in(f->body, body);
      } else if (const auto* i = as<IfNode>(e)) {
        use_in(i->cond, s);
        int then_scope = new_scope(s, i->then_branch.get());
        int else_scope = new_scope(s, i->else_branch.get());
        ni.own_scopes = {then_scope, else_scope};
        use_in(i->then_branch, then_scope);
        use_in(i->else_branch, else_scope);
      } else if (const auto* l = as<LetNode>(e)) {
        if (scopes_[s].result == e.get() && ni.uses == 1) {
          ni.flattened_let = true;
          ni.let_scope = s;
          scopes_[s].result = l->body.get();
        } else {
          ni.let_scope = new_scope(s, l->body.get());
          ni.own_scopes = {ni.let_scope};
        }
        use_in(l->value, ni.let_scope);
        use_in(l->body, ni.let_scope);
      } else {
        for (const auto& k : children(e)) use_in(k, s);
      }
    }
  }

  // ---- pass 2: numbering ----
  void number() {
    struct Work {
      int scope;  // -1: assign a number to `node`
      size_t index;
      const ExprNode* node;
    };
    std::vector<Work> stack{{0, 0, nullptr}};
    auto push_scopes = [&](const ExprNode* n) {
      const auto& own = info_[n].own_scopes;
      for (auto it = own.rbegin(); it != own.rend(); ++it) stack.push_back({*it, 0, nullptr});
    };
    int64_t next_number = 0;
    while (!stack.empty()) {
      Work w = stack.back();
      stack.pop_back();
      if (w.scope < 0) {
        info_[w.node].number = next_number++;
        continue;
      }
      const ScopeData& s = scopes_[w.scope];
      if (w.index == s.events.size()) {
        const NodeInfo& ri = info_[s.result];
        if (!ri.bound) push_scopes(s.result);
        continue;
      }
      stack.push_back({w.scope, w.index + 1, nullptr});
      const Event& ev = *s.events[w.index];
      if (ev.let_line) {
        const ExprNode* value = node_as<LetNode>(ev.node.get()).value.get();
        if (info_[value].inline_at_let) push_scopes(value);
      } else {
        stack.push_back({-1, 0, ev.node.get()});
        push_scopes(ev.node.get());
      }
    }
  }

  // ---- pass 3: text ----
  struct Piece {
    std::string text;
    int scope = -1;  // >= 0: print this scope here, at `indent`
    int indent = 0;
  };

  std::string emit() {
    struct Work {
      std::string text;
      int scope = -1;
      size_t index = 0;
      int indent = 0;
    };
    std::string out;
    std::vector<Work> stack;
    stack.push_back({"", 0, 0, 0});
    while (!stack.empty()) {
      Work w = std::move(stack.back());
      stack.pop_back();
      if (w.scope < 0) {
        out += w.text;
        continue;
      }
      const ScopeData& s = scopes_[w.scope];
      std::vector<Piece> pieces;
      std::string pad(static_cast<size_t>(w.indent) * 2, ' ');
      if (w.index == s.events.size()) {
        pieces.push_back({pad});
        result_pieces(s.result, w.indent, pieces);
        pieces.push_back({"\n"});
      } else {
        stack.push_back({"", w.scope, w.index + 1, w.indent});
        const Event& ev = *s.events[w.index];
        if (ev.let_line) {
          const auto& let = node_as<LetNode>(ev.node.get());
          pieces.push_back({pad + "let " + var_decl(*let.var) + " = "});
          const ExprNode* value = let.value.get();
          if (info_[value].inline_at_let)
            inline_pieces(value, w.indent, pieces);
          else
            pieces.push_back({ref(value)});
        } else {
          pieces.push_back({pad + "%" + std::to_string(info_[ev.node.get()].number) + " = "});
          inline_pieces(ev.node.get(), w.indent, pieces);
        }
        pieces.push_back({";\n"});
      }
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) stack.push_back({it->text, it->scope, 0, it->indent});
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  void result_pieces(const ExprNode* r, int indent, std::vector<Piece>& pieces) {
    const NodeInfo& ri = info_[r];
    if (ri.bound || is_atomic(*r)) {
      pieces.push_back({ref(r)});
    } else if (r == root_.get() && !def_name_.empty() && r->kind == ExprKind::kFunction) {
      function_pieces(node_as<FunctionNode>(r), "def @" + text::name_text(def_name_), indent, pieces);
    } else {
      inline_pieces(r, indent, pieces);
    }
  }

  // A node written out in full (not as %N).
  void inline_pieces(const ExprNode* n, int indent, std::vector<Piece>& pieces) {
    std::string pad(static_cast<size_t>(indent) * 2, ' ');
    const NodeInfo& ni = info_[n];
    switch (n->kind) {
      case ExprKind::kFunction: function_pieces(node_as<FunctionNode>(n), "fn ", indent, pieces); return;
      case ExprKind::kIf: {
        const auto& i = node_as<IfNode>(n);
        pieces.push_back({"if (" + ref(i.cond.get()) + ") {\n"});
        pieces.push_back({"", ni.own_scopes[0], indent + 1});
        pieces.push_back({pad + "} else {\n"});
        pieces.push_back({"", ni.own_scopes[1], indent + 1});
        pieces.push_back({pad + "}"});
        return;
      }
      case ExprKind::kLet:
        pieces.push_back({"{\n"});
        pieces.push_back({"", ni.own_scopes[0], indent + 1});
        pieces.push_back({pad + "}"});
        return;
      case ExprKind::kCall: pieces.push_back({call_text(node_as<CallNode>(n)) + type_comment(n)}); return;
      case ExprKind::kLoop: {
        // loop(trip count, condition, carried...) body: the body is a function written like a
        // call's function argument.
        const auto& l = node_as<LoopNode>(n);
        std::vector<std::string> items{ref(l.trip_count.get()), ref(l.cond.get())};
        for (const auto& v : l.inits) items.push_back(ref(v.get()));
        pieces.push_back({"loop(" + join(items) + ") " + ref(l.body.get()) + type_comment(n)});
        return;
      }
      case ExprKind::kTuple: {
        const auto& t = node_as<TupleNode>(n);
        std::vector<std::string> fields;
        for (const auto& f : t.fields) fields.push_back(ref(f.get()));
        pieces.push_back({"(" + join(fields) + (fields.size() == 1 ? ",)" : ")")});
        return;
      }
      case ExprKind::kTupleGetItem: {
        const auto& g = node_as<TupleGetItemNode>(n);
        pieces.push_back({tuple_operand(g.tuple.get(), g.index) + "." + std::to_string(g.index)});
        return;
      }
      default: pieces.push_back({ref(n)}); return;
    }
  }

  void function_pieces(const FunctionNode& f, const std::string& prefix, int indent, std::vector<Piece>& pieces) {
    std::vector<std::string> items;
    for (const auto& p : f.params) items.push_back(var_decl(*p));
    for (const auto& [key, value] : f.attrs.entries()) items.push_back(key + "=" + value.to_string());
    std::string head = prefix + "(" + join(items) + ")";
    Type ret = f.ret_type;
    if (!ret && opts_.show_types)
      if (const auto* ft = as_func(f.checked_type())) ret = ft->ret;
    if (ret) head += " -> " + type_str(ret);
    pieces.push_back({head + " {\n"});
    pieces.push_back({"", info_[&f].own_scopes[0], indent + 1});
    pieces.push_back({std::string(static_cast<size_t>(indent) * 2, ' ') + "}"});
  }

  std::string call_text(const CallNode& c) {
    std::string out = ref(c.callee.get()) + "(";
    std::vector<std::string> items;
    for (const auto& a : c.args) items.push_back(ref(a.get()));
    for (const auto& [key, value] : c.attrs.entries()) items.push_back(key + "=" + value.to_string());
    out += join(items);
    out += ")";
    return out;
  }

  // `%p0.0` reads back as field 0 of %p0 only when no variable is itself named "p0.0";
  // names with dots and literals get parentheses.
  std::string tuple_operand(const ExprNode* t, int index) {
    std::string text = ref(t);
    if (info_[t].bound) return text;
    if (t->kind == ExprKind::kVar) {
      const std::string& name = var_name(node_as<VarNode>(t));
      bool ambiguous = text::is_plain_name(name) &&
                       (name.find('.') != std::string::npos || raw_names_.count(name + "." + std::to_string(index)));
      if (!ambiguous) return text;
    }
    return "(" + text + ")";
  }

  std::string type_comment(const ExprNode* n) const {
    if (!opts_.show_types || !n->checked_type()) return "";
    return " /* ty=" + type_str(n->checked_type()) + " */";
  }

  // How a node is referred to from another expression.
  std::string ref(const ExprNode* n) {
    auto it = info_.find(n);
    if (it != info_.end() && it->second.bound) return "%" + std::to_string(it->second.number);
    switch (n->kind) {
      case ExprKind::kVar: return "%" + text::name_text(var_name(node_as<VarNode>(n)));
      case ExprKind::kGlobalVar: return "@" + text::name_text(node_as<GlobalVarNode>(n).name);
      case ExprKind::kOp: return node_as<OpNode>(n).name();
      case ExprKind::kConstant: {
        const auto& c = node_as<ConstantNode>(n);
        std::optional<std::string> literal = text::scalar_literal(c.data);
        std::string text = literal ? *literal : "meta[relay.Constant][" + std::to_string(meta_.index_of(n)) + "]";
        return text + type_comment(n);
      }
      default: throw Error::bug("printer: a sub-expression has no binding");
    }
  }

  std::string var_decl(const VarNode& v) {
    std::string out = "%" + text::name_text(var_name(v));
    if (v.type_annotation) out += ": " + type_str(v.type_annotation);
    return out;
  }

  // Distinct variables print with distinct names: the second %x becomes %x1.
  const std::string& var_name(const VarNode& v) {
    auto it = var_names_.find(&v);
    if (it != var_names_.end()) return it->second;
    std::string base = v.name.empty() ? "v" : v.name;
    std::string name = base;
    if (used_names_.count(name)) {
      int& suffix = next_suffix_[base];
      do {
        name = base + std::to_string(++suffix);
      } while (used_names_.count(name));
    }
    used_names_.insert(name);
    return var_names_.emplace(&v, std::move(name)).first->second;
  }

  const PrintOptions& opts_;
  MetaTable& meta_;
  Expr root_;
  std::string def_name_;
  std::vector<Event> events_;
  std::vector<ScopeData> scopes_;
  std::unordered_map<const ExprNode*, NodeInfo> info_;
  std::unordered_set<std::string> raw_names_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, int> next_suffix_;
};

}  // namespace

std::string print_module(const IRModule& mod, const PrintOptions& opts) {
  MetaTable meta;
  std::string out;
  for (const auto& [name, fn] : mod.functions()) {
    if (!out.empty()) out += "\n";
    out += UnitPrinter(opts, meta).print(fn, name) + "\n";
  }
  if (opts.show_metadata) out += meta.section();
  return out;
}

std::string print_expr(const Expr& e, const PrintOptions& opts) {
  if (!e) return "<null>";
  MetaTable meta;
  std::string out = UnitPrinter(opts, meta).print(e, "");
  if (opts.show_metadata) {
    std::string section = meta.section();
    if (!section.empty()) out += "\n" + section;
  }
  return out;
}

}  // namespace kiln
