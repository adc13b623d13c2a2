// The operator registry: for each op name, its arguments, attribute schema, type
// relation, fusion pattern and the name of its reference kernel. Op definitions live in
// src/op/ (one file per family) and are registered by register_builtin_ops().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/ir/type.h"
#include "kiln/runtime/attrs.h"

namespace kiln {

// How an op may be fused with its neighbours (Relay's TOpPattern, same order).
enum class OpPattern : uint8_t {
  kElemwise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};
const char* pattern_name(OpPattern p);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  AttrValue default_value;  // None with required=false means "optional, absent"
  bool required = false;
  std::string doc;
};

struct ArgSpec {
  std::string name;
  bool optional = false;
};

// Computes the result type from the argument types and normalised attributes, or throws
// kiln::Error describing the mismatch (argument name, expected and found shapes).
using TypeRelation = std::function<Type(const std::vector<Type>& arg_types, const Attrs& attrs)>;

// How an op compiles: its compute, schedule and limits (kiln/op/strategy.h). The IR only
// carries it; the op layer defines and reads it.
struct OpStrategy;

struct OpDef {
  std::string name;
  std::vector<ArgSpec> args;
  bool variadic = false;  // accepts any number of arguments (at least args.size())
  std::vector<AttrSpec> attr_specs;
  TypeRelation relation;
  OpPattern pattern = OpPattern::kOpaque;
  std::string kernel;  // reference kernel name; defaults to the op name
  // Results differ from call to call (random ops): never folded into constants.
  bool nondeterministic = false;
  // Null when the op has no compute definition and runs its reference kernel when compiled.
  std::shared_ptr<OpStrategy> strategy;
  // Floating-point operations of one call (a multiply-add counts 2) from its typed arguments and
  // result, for kiln bench --profile's GFLOP/s; 0 when a shape is unknown. Unset: not counted
  // (element-wise and data-movement ops, whose speed is bytes, not flops).
  using FlopsFn = std::function<double(const std::vector<Type>& arg_types, const Type& out_type, const Attrs& attrs)>;
  FlopsFn flops;
  // Whether the result is the argument's bytes under another shape (same dtype, the same
  // elements in the same order) for these argument types and attributes: the graph executor runs
  // a fused function made only of such calls as an alias of its input, not a copy. Unset: never.
  using KeepsBytesFn =
      std::function<bool(const std::vector<Type>& arg_types, const Type& out_type, const Attrs& attrs)>;
  KeepsBytesFn keeps_bytes;
  std::string doc;

  // Fluent set-up, used by the op files.
  OpDef& describe(std::string text);
  OpDef& arg(std::string arg_name, bool optional = false);
  OpDef& set_variadic();
  OpDef& set_relation(TypeRelation rel);
  // The attribute schema, derived from the op's declared struct T (kiln/attrs/reflect.h): the
  // only way an op declares attributes.
  template <class T>
  OpDef& attrs();
  // A relation reading the attributes as T, decoded (and validated) once per call; its errors
  // name the op.
  template <class T>
  OpDef& set_relation(std::function<Type(const std::vector<Type>& arg_types, const T& attrs)> rel);
  OpDef& set_pattern(OpPattern p);
  template <class T>
  OpDef& set_flops(std::function<double(const std::vector<Type>& arg_types, const Type& out_type, const T& attrs)> fn);
  OpDef& set_kernel(std::string kernel_name);
  OpDef& set_nondeterministic();
  // keeps_bytes: always (reshape), or when `fn` says so for the call (layout_transform).
  OpDef& set_keeps_bytes();
  template <class T>
  OpDef& set_keeps_bytes(
      std::function<bool(const std::vector<Type>& arg_types, const Type& out_type, const T& attrs)> fn);

  // Checks the given attributes against the schema (unknown names, wrong kinds, missing
  // required ones) and returns them with every default filled in, in schema order.
  Attrs normalize(const Attrs& given) const;
  // Checks the argument count.
  void check_arity(size_t num_args) const;
};

namespace op_detail {
struct SchemaBuilder {
  std::vector<AttrSpec>* specs;
  template <class F>
  void operator()(const char* name, F& field, const char* doc) {
    specs->push_back({name, attr_kind_of<F>(), attr_value_of(field), false, doc});
  }
  // A field marked kRequired: no default.
  template <class F>
  void operator()(const char* name, F&, const char* doc, RequiredAttr) {
    specs->push_back({name, attr_kind_of<F>(), AttrValue(), true, doc});
  }
};
}  // namespace op_detail

template <class T>
OpDef& OpDef::attrs() {
  T defaults{};
  op_detail::SchemaBuilder builder{&attr_specs};
  defaults.visit(builder);
  return *this;
}

template <class T>
OpDef& OpDef::set_relation(std::function<Type(const std::vector<Type>& arg_types, const T& attrs)> rel) {
  relation = [rel = std::move(rel), op = name](const std::vector<Type>& arg_types, const Attrs& attrs) {
    try {
      return rel(arg_types, attrs_from<T>(attrs, op));
    } catch (Error& e) {
      e.op(op);
      throw;
    }
  };
  return *this;
}

namespace op_detail {
// A function of (argument types, result type, attributes) reading the attributes as T, decoded
// per call; its errors name the op.
template <class T, class R>
std::function<R(const std::vector<Type>&, const Type&, const Attrs&)> with_typed_attrs(
    std::function<R(const std::vector<Type>&, const Type&, const T&)> fn, std::string op) {
  return [fn = std::move(fn), op = std::move(op)](const std::vector<Type>& arg_types, const Type& out_type,
                                                  const Attrs& attrs) {
    return fn(arg_types, out_type, attrs_from<T>(attrs, op));
  };
}
}  // namespace op_detail

template <class T>
OpDef& OpDef::set_flops(std::function<double(const std::vector<Type>&, const Type&, const T&)> fn) {
  flops = op_detail::with_typed_attrs<T, double>(std::move(fn), name);
  return *this;
}

template <class T>
OpDef& OpDef::set_keeps_bytes(std::function<bool(const std::vector<Type>&, const Type&, const T&)> fn) {
  keeps_bytes = op_detail::with_typed_attrs<T, bool>(std::move(fn), name);
  return *this;
}

class OpRegistry {
 public:
  static OpRegistry& global();
  OpDef& add(const std::string& name);  // throws if already registered
  const OpDef* find(const std::string& name) const;
  const OpDef& get(const std::string& name) const;  // throws "unknown op"
  // For registration code adding to an op defined elsewhere; throws "unknown op".
  OpDef& get_mutable(const std::string& name);
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>> ops_;
};

// Registers every built-in op (idempotent). Defined in the op layer; programs and tests
// call it once at start-up.
void register_builtin_ops();

}  // namespace kiln
