// kiln._core: the compiler and runtime as the pure-Python package (python/kiln/) needs them.
// Kept to a few plain entry points: TVM's names and conveniences live in Python, and tensors
// cross as .npy bytes (numpy writes and reads them), so no dtype table is duplicated here.
// Every kiln::Error becomes kiln.KilnError; the GIL is released while kiln compiles or runs.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "kiln/backend/build.h"
#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/ir/op.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace py = pybind11;

namespace kiln::python {

// TpuLang's builder (tpulang.cc); `wrap` makes a kiln.ir module object of an IRModule.
void bind_tpulang(py::module_& parent, const std::function<py::object(IRModule, std::vector<std::string>)>& wrap);

namespace {

// A module with the names of @main's inputs and outputs, as the graph executor will know them.
struct Module {
  IRModule ir;
  std::vector<std::string> input_names;  // every parameter of @main, in order
  std::vector<std::string> output_names;
};

using NpyList = std::vector<std::pair<std::string, py::bytes>>;

NDArray from_npy(const py::bytes& bytes, const std::string& what) { return parse_npy(std::string(bytes), what); }

py::bytes to_npy(const NDArray& array) { return py::bytes(serialize_npy(array)); }

NpyList to_npy_list(const NamedArrays& arrays) {
  NpyList out;
  for (const auto& [name, array] : arrays) out.emplace_back(name, to_npy(array));
  return out;
}

NamedArrays from_npy_list(const NpyList& arrays) {
  NamedArrays out;
  for (const auto& [name, bytes] : arrays) out.emplace_back(name, from_npy(bytes, "parameter '" + name + "'"));
  return out;
}

Module module_of_onnx(const OnnxModel& onnx) {
  Module m{onnx.module, {}, onnx.output_names};
  for (const auto& p : onnx.module.lookup("main")->params) m.input_names.push_back(p->name);
  return m;
}

std::pair<Module, NpyList> import_onnx(const std::string& bytes_or_path, bool is_path,
                                       const std::map<std::string, Shape>& shapes,
                                       const std::map<std::string, std::string>& dtypes, bool freeze_params) {
  OnnxImportOptions options;
  options.shapes = shapes;
  for (const auto& [name, dtype] : dtypes) options.dtypes[name] = parse_dtype(dtype);
  options.freeze_params = freeze_params;
  OnnxModel onnx;
  {
    py::gil_scoped_release release;
    onnx = is_path ? from_onnx_file(bytes_or_path, options) : from_onnx_bytes(bytes_or_path, options);
  }
  return {module_of_onnx(onnx), to_npy_list(onnx.params)};
}

Module parse_text(const std::string& text, const std::string& source) {
  Module m;
  m.ir = infer_types(parse_module(text, source));
  const Function& main = m.ir.lookup("main");
  for (const auto& p : main->params) m.input_names.push_back(p->name);
  const Type& ret = as_func(main->checked_type())->ret;
  size_t outputs = as_tuple(ret) ? as_tuple(ret)->fields.size() : 1;
  for (size_t i = 0; i < outputs; ++i) m.output_names.push_back(cat("output_", i));
  return m;
}

AttrValue option_value(const py::handle& value, const std::string& what) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return value.cast<int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  throw std::move(Error("unsupported pass option value for " + what)
                      .expected("bool, int, float or str", std::string(py::str(value.get_type()))));
}

// The context of kiln.transform.PassContext; unknown pass names are errors listing the passes.
PassContext make_context(int opt_level, const std::vector<std::string>& required,
                         const std::vector<std::string>& disabled, const py::dict& options) {
  register_builtin_passes();
  const PassRegistry& registry = PassRegistry::global();
  PassContext ctx;
  ctx.opt_level = opt_level;
  for (const std::string& name : required) ctx.required_passes.insert(registry.get(name).info.name);
  for (const std::string& name : disabled) ctx.disabled_passes.insert(registry.get(name).info.name);
  for (const auto& [pass_obj, keys] : options) {
    std::string pass = py::str(pass_obj);
    registry.get(pass);
    check(py::isinstance<py::dict>(keys), "the options of pass ", pass, " must be a dict of option values");
    for (const auto& [key, value] : keys.cast<py::dict>()) {
      std::string name = py::str(key);
      ctx.options[pass].set(name, option_value(value, pass + "." + name));
    }
  }
  return ctx;
}

std::vector<std::string> pass_names() {
  register_builtin_passes();
  return PassRegistry::global().names();
}

Module with_ir(const Module& m, IRModule ir) { return Module{std::move(ir), m.input_names, m.output_names}; }

Module run_sequence(const Module& m, const std::vector<std::string>& names, const PassContext& ctx, bool pipeline) {
  register_builtin_passes();
  for (const std::string& name : names) PassRegistry::global().get(name);
  py::gil_scoped_release release;
  return with_ir(m, pipeline ? Sequential(names)(m.ir, ctx) : run_passes(m.ir, names, ctx));
}

BuiltModel build_module(const Module& m, const NpyList& params, const PassContext& ctx, const std::string& target) {
  if (target != "c" && target != "llvm") throw std::move(Error("unsupported target").expected("c", target));
  NamedArrays values = from_npy_list(params);
  std::set<std::string> bound_names;
  for (const auto& [name, value] : values) bound_names.insert(name);
  std::vector<std::string> inputs;
  for (const std::string& name : m.input_names)
    if (!bound_names.count(name)) inputs.push_back(name);
  BuildOptions options;
  options.passes = ctx;
  py::gil_scoped_release release;
  // Bound first, as relay.build binds params: the module then builds as `kiln compile` builds
  // an ONNX model whose initializers are constants, to the same values.
  IRModule bound = values.empty() ? m.ir : infer_types(bind_params(m.ir, values));
  return build(bound, {}, inputs, m.output_names, options);
}

// One executor used from one Python thread at a time: the lock keeps a run started without the
// GIL from overlapping another call.
struct Executor {
  Executor(std::shared_ptr<const Artifact> artifact, int num_threads) : executor(std::move(artifact), num_threads) {}
  GraphExecutor executor;
  std::mutex mutex;
};

struct ArtifactHandle {
  std::shared_ptr<const Artifact> artifact;
};

py::list tensor_infos(const std::vector<TensorInfo>& infos) {
  py::list out;
  for (const TensorInfo& t : infos) out.append(py::make_tuple(t.name, t.shape, std::string(dtype_name(t.dtype))));
  return out;
}

void bind_ir_and_passes(py::module_& m) {
  py::class_<Module>(m, "Module")
      .def_static("parse", &parse_text, py::arg("text"), py::arg("source") = "<text>")
      .def("__str__", [](const Module& self) { return print_module(self.ir); })
      .def("function_names", [](const Module& self) { return self.ir.names(); })
      .def_readonly("input_names", &Module::input_names)
      .def_readonly("output_names", &Module::output_names);
  m.def("import_onnx", &import_onnx, py::arg("bytes_or_path"), py::arg("is_path"), py::arg("shapes"), py::arg("dtypes"),
        py::arg("freeze_params"));
  py::class_<PassContext>(m, "PassContext")
      .def(py::init(&make_context), py::arg("opt_level"), py::arg("required"), py::arg("disabled"), py::arg("options"))
      .def_readonly("opt_level", &PassContext::opt_level);
  m.def("pass_names", &pass_names);
  m.def("check_dtype", [](const std::string& name) { parse_dtype(name); });
  m.def("check_pass", [](const std::string& name) {
    register_builtin_passes();
    PassRegistry::global().get(name);
  });
  m.def("run_passes", &run_sequence, py::arg("module"), py::arg("names"), py::arg("ctx"), py::arg("pipeline"));
}

void bind_build_and_runtime(py::module_& m) {
  py::class_<BuiltModel>(m, "BuiltModel")
      .def_readonly("graph_json", &BuiltModel::graph_json)
      .def_readonly("kernels_c", &BuiltModel::kernels_c)
      .def_readonly("num_kernels", &BuiltModel::num_kernels)
      .def_readonly("fallbacks", &BuiltModel::fallbacks)
      .def_property_readonly("params", [](const BuiltModel& self) { return to_npy_list(self.params); })
      .def("write", [](const BuiltModel& self, const std::string& dir) {
        py::gil_scoped_release release;
        write_artifact(self, dir);
      });
  m.def("build", &build_module, py::arg("module"), py::arg("params"), py::arg("ctx"), py::arg("target"));

  py::class_<ArtifactHandle>(m, "Artifact")
      .def_static("load",
                  [](const std::string& dir) {
                    py::gil_scoped_release release;
                    return ArtifactHandle{Artifact::load(dir)};
                  })
      .def_property_readonly("inputs", [](const ArtifactHandle& self) { return tensor_infos(self.artifact->inputs()); })
      .def_property_readonly("outputs",
                             [](const ArtifactHandle& self) { return tensor_infos(self.artifact->outputs()); });

  py::class_<Executor>(m, "Executor")
      .def(py::init([](const ArtifactHandle& a, int num_threads) { return new Executor(a.artifact, num_threads); }),
           py::arg("artifact"), py::arg("num_threads") = 1)
      .def("num_inputs", [](Executor& self) { return self.executor.num_inputs(); })
      .def("num_outputs", [](Executor& self) { return self.executor.num_outputs(); })
      .def("input_index", [](Executor& self, const std::string& name) { return self.executor.input_index(name); })
      .def("set_input",
           [](Executor& self, size_t index, const py::bytes& npy) {
             check(index < self.executor.num_inputs(), "input index ", index, " out of range: the model has ",
                   self.executor.num_inputs(), " inputs");
             NDArray value = from_npy(npy, "input " + self.executor.input_info(index).name);
             std::lock_guard lock(self.mutex);
             self.executor.set_input(index, value);
           })
      .def("run",
           [](Executor& self) {
             py::gil_scoped_release release;
             std::lock_guard lock(self.mutex);
             self.executor.run();
           })
      .def("get_output", [](Executor& self, size_t index) {
        check(index < self.executor.num_outputs(), "output index ", index, " out of range: the model has ",
              self.executor.num_outputs(), " outputs");
        NDArray value;
        {
          std::lock_guard lock(self.mutex);
          value = self.executor.get_output(index);
        }
        return to_npy(value);
      });
}

// An IR expression as Python holds it: nodes are immutable and shared, so a handle is enough.
struct PyExpr {
  Expr expr;
};

AttrValue attr_value(const py::handle& value, const std::string& what) {
  if (value.is_none()) return AttrValue();
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::int_>(value)) return value.cast<int64_t>();
  // numpy scalars and arrays, as the Python values they hold.
  if (py::hasattr(value, "tolist")) return attr_value(value.attr("tolist")(), what);
  if (py::isinstance<py::sequence>(value)) {
    AttrValue::List items;
    for (const auto& item : value.cast<py::sequence>()) items.push_back(attr_value(item, what));
    return items;
  }
  throw std::move(
      Error("unsupported attribute value for " + what)
          .expected("None, bool, int, float, str or a list of them", std::string(py::str(value.get_type()))));
}

py::object python_value(const AttrValue& value) {
  if (value.is_bool()) return py::bool_(value.as_bool());
  if (value.is_int()) return py::int_(value.as_int());
  if (value.is_float()) return py::float_(value.as_double());
  if (value.is_string()) return py::str(value.as_string());
  if (value.is_list()) {
    py::list items;
    for (const AttrValue& item : value.as_list()) items.append(python_value(item));
    return py::tuple(items);
  }
  return py::none();
}

Attrs attrs_of(const py::dict& given, const std::string& what) {
  Attrs attrs;
  for (const auto& [key, value] : given) {
    std::string name = py::str(key);
    attrs.set(name, attr_value(value, what + " attribute '" + name + "'"));
  }
  return attrs;
}

std::vector<Expr> exprs_of(const std::vector<PyExpr>& items) {
  std::vector<Expr> out;
  for (const PyExpr& item : items) out.push_back(item.expr);
  return out;
}

// A call of a registered op, checked now as the op declares it: argument count, attribute
// names and kinds. The attributes are kept as given (coerced to their declared kinds), so the
// call prints as it was written; relations check the rest when the call is typed.
PyExpr call_registered_op(const std::string& op_name, const std::vector<PyExpr>& args, const py::dict& given) {
  const OpDef& def = OpRegistry::global().get(op_name);
  def.check_arity(args.size());
  Attrs written = attrs_of(given, op_name);
  Attrs normalized = def.normalize(written);
  Attrs coerced;
  for (const auto& [name, value] : written.entries()) coerced.set(name, *normalized.find(name));
  return {call_op(op_name, exprs_of(args), coerced)};
}

py::list op_schemas() {
  py::list out;
  for (const std::string& name : OpRegistry::global().names()) {
    const OpDef& def = OpRegistry::global().get(name);
    py::list args, attrs;
    for (const ArgSpec& a : def.args) args.append(py::make_tuple(a.name, a.optional));
    for (const AttrSpec& a : def.attr_specs)
      attrs.append(py::make_tuple(a.name, attr_kind_name(a.kind), python_value(a.default_value), a.required, a.doc));
    out.append(py::make_tuple(name, args, def.variadic, attrs, def.doc));
  }
  return out;
}

std::vector<std::string> output_names_of(const Function& main) {
  const Type& ret = as_func(main->checked_type())->ret;
  size_t outputs = as_tuple(ret) ? as_tuple(ret)->fields.size() : 1;
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs; ++i) names.push_back(cat("output_", i));
  return names;
}

Module typed_module(IRModule ir) {
  Module m;
  m.ir = infer_types(ir);
  if (const Function* main = m.ir.find("main")) {
    for (const auto& p : (*main)->params) m.input_names.push_back(p->name);
    m.output_names = output_names_of(*main);
  }
  return m;
}

// The variables `e` uses but does not bind, in order of first use (relay.analysis.free_vars).
std::vector<Var> free_vars(const Expr& e) {
  std::vector<Var> bound, used;
  auto contains = [](const std::vector<Var>& vars, const VarNode* v) {
    for (const Var& x : vars)
      if (x.get() == v) return true;
    return false;
  };
  post_order_visit(e, [&](const Expr& node) {
    if (const auto* fn = as<FunctionNode>(node)) bound.insert(bound.end(), fn->params.begin(), fn->params.end());
    if (const auto* let = as<LetNode>(node)) bound.push_back(let->var);
    if (const auto* v = as<VarNode>(node); v && !contains(used, v)) used.push_back(as_var(node));
  });
  std::vector<Var> free;
  for (const Var& v : used)
    if (!contains(bound, v.get())) free.push_back(v);
  return free;
}

Function as_function_or_wrap(const Expr& e) {
  if (Function fn = as_function(e)) return fn;
  return make_function(free_vars(e), e);
}

Var checked_var(const PyExpr& e, const std::string& what) {
  Var v = as_var(e.expr);
  check(v != nullptr, what, " must be variables (kiln.ir.var)");
  return v;
}

std::string expr_type(const PyExpr& e) { return type_str(infer_untyped_nodes(e.expr)); }

size_t tuple_size(const PyExpr& e) {
  const TupleTypeNode* tuple = as_tuple(infer_untyped_nodes(e.expr));
  check(tuple != nullptr, "the expression is not a tuple: its type is ", expr_type(e));
  return tuple->fields.size();
}

std::vector<Value> interpreter_args(const Function& fn, const NpyList& arrays) {
  check(arrays.size() == fn->params.size(), "@main takes ", fn->params.size(), " arguments, ", arrays.size(), " given");
  std::vector<Value> args;
  for (const auto& [name, bytes] : arrays) args.emplace_back(from_npy(bytes, "argument '" + name + "'"));
  return args;
}

std::vector<py::bytes> interpret_module(const Module& m, const std::string& entry, const NpyList& arrays) {
  std::vector<Value> args = interpreter_args(m.ir.lookup(entry), arrays);
  std::vector<NDArray> results;
  {
    py::gil_scoped_release release;
    results = interpret(m.ir, entry, args).flatten();
  }
  std::vector<py::bytes> out;
  for (const NDArray& r : results) out.push_back(to_npy(r));
  return out;
}

// How often each op is called in the module (nested functions included), and under
// "fn(Primitive)" how many fused functions it holds: what the examples assert about a pass.
std::map<std::string, int64_t> op_counts(const Module& m) {
  std::map<std::string, int64_t> counts;
  for (const auto& [name, fn] : m.ir.functions())
    post_order_visit(fn, [&](const Expr& node) {
      if (const auto* call = as<CallNode>(node); call && call->op()) ++counts[call->op()->name];
      if (const auto* f = as<FunctionNode>(node); f && f->is_primitive()) ++counts["fn(Primitive)"];
    });
  return counts;
}

void bind_expressions(py::module_& m) {
  py::class_<PyExpr>(m, "Expr")
      .def("__str__", [](const PyExpr& self) { return print_expr(self.expr); })
      .def_property_readonly("kind",
                             [](const PyExpr& self) {
                               static const char* names[] = {"Var",   "GlobalVar",    "Constant", "Op",  "Call",
                                                             "Tuple", "TupleGetItem", "Function", "Let", "If"};
                               return std::string(names[static_cast<int>(self.expr->kind)]);
                             })
      .def("type", &expr_type)
      .def("tuple_size", &tuple_size)
      .def("same_as", [](const PyExpr& self, const PyExpr& other) { return self.expr == other.expr; })
      .def("structural_equal",
           [](const PyExpr& self, const PyExpr& other) { return structural_equal(self.expr, other.expr); })
      .def("name",
           [](const PyExpr& self) -> std::string {
             if (const auto* v = as<VarNode>(self.expr)) return v->name;
             if (const auto* g = as<GlobalVarNode>(self.expr)) return g->name;
             if (const auto* c = as<CallNode>(self.expr); c && c->op()) return c->op()->name;
             return "";
           })
      .def("children",
           [](const PyExpr& self) {
             std::vector<PyExpr> out;
             for (const Expr& c : children(self.expr)) out.push_back({c});
             return out;
           })
      .def("attrs",
           [](const PyExpr& self) {
             py::dict out;
             const Attrs* attrs = nullptr;
             if (const auto* c = as<CallNode>(self.expr)) attrs = &c->attrs;
             if (const auto* f = as<FunctionNode>(self.expr)) attrs = &f->attrs;
             if (attrs)
               for (const auto& [name, value] : attrs->entries()) out[py::str(name)] = python_value(value);
             return out;
           })
      .def("with_attrs", [](const PyExpr& self, const py::dict& given) {
        Function fn = as_function(self.expr);
        check(fn != nullptr, "with_attr applies to functions");
        Attrs attrs = fn->attrs;
        Attrs added = attrs_of(given, "function");
        for (const auto& [name, value] : added.entries()) attrs.set(name, value);
        return PyExpr{make_function(fn->params, fn->body, fn->ret_type, attrs)};
      });

  m.def("var", [](const std::string& name, const std::optional<Shape>& shape, const std::string& dtype) {
    return PyExpr{make_var(name, shape ? tensor_type(*shape, parse_dtype(dtype)) : nullptr)};
  });
  m.def("constant", [](const py::bytes& npy) { return PyExpr{make_constant(from_npy(npy, "constant"))}; });
  m.def("constant_value", [](const PyExpr& e) {
    const auto* c = as<ConstantNode>(e.expr);
    check(c != nullptr, "not a constant");
    return to_npy(c->data);
  });
  m.def("global_var", [](const std::string& name) { return PyExpr{make_global_var(name)}; });
  m.def("call_op", &call_registered_op, py::arg("op"), py::arg("args"), py::arg("attrs"));
  m.def("call", [](const PyExpr& callee, const std::vector<PyExpr>& args) {
    check(!as<OpNode>(callee.expr), "call ops through kiln.op");
    return PyExpr{make_call(callee.expr, exprs_of(args))};
  });
  m.def("tuple", [](const std::vector<PyExpr>& fields) { return PyExpr{make_tuple(exprs_of(fields))}; });
  m.def("tuple_get_item",
        [](const PyExpr& tuple, int index) { return PyExpr{make_tuple_get_item(tuple.expr, index)}; });
  m.def("function", [](const std::vector<PyExpr>& params, const PyExpr& body, const py::dict& attrs) {
    std::vector<Var> vars;
    for (const PyExpr& p : params) vars.push_back(checked_var(p, "a function's parameters"));
    return PyExpr{make_function(vars, body.expr, nullptr, attrs_of(attrs, "function"))};
  });
  m.def("let", [](const PyExpr& var, const PyExpr& value, const PyExpr& body) {
    return PyExpr{make_let(checked_var(var, "a let binder"), value.expr, body.expr)};
  });
  m.def("op_schemas", &op_schemas);
  m.def("op_counts", &op_counts);
  m.def("module_from_functions", [](const std::vector<std::pair<std::string, PyExpr>>& functions) {
    IRModule ir;
    for (const auto& [name, e] : functions) ir.add(name, as_function_or_wrap(e.expr));
    return typed_module(std::move(ir));
  });
  m.def("module_function", [](const Module& self, const std::string& name) { return PyExpr{self.ir.lookup(name)}; });
  m.def("module_structural_equal", [](const Module& a, const Module& b) { return structural_equal(a.ir, b.ir); });
  m.def("interpret", &interpret_module, py::arg("module"), py::arg("entry"), py::arg("args"));
}

PyObject* kiln_error_type = nullptr;

// The message with its exact length and undecodable bytes escaped: text quoted from a model
// may hold NULs or broken UTF-8, which pybind11's default translation would cut or lose.
void set_kiln_error(const Error& e) {
  std::string_view text = e.what();
  PyObject* message = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  PyErr_SetObject(kiln_error_type, message);
  Py_XDECREF(message);
}

}  // namespace

}  // namespace kiln::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "kiln's compiler and runtime; use the kiln package rather than this module.";
  kiln::python::kiln_error_type = py::register_exception<kiln::Error>(m, "KilnError", PyExc_RuntimeError).ptr();
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const kiln::Error& e) {
      kiln::python::set_kiln_error(e);
    }
  });
  kiln::register_builtin_ops();
  kiln::register_builtin_passes();
  kiln::python::bind_ir_and_passes(m);
  kiln::python::bind_build_and_runtime(m);
  kiln::python::bind_expressions(m);
  kiln::python::bind_tpulang(m, [](kiln::IRModule ir, std::vector<std::string> output_names) {
    kiln::python::Module module = kiln::python::typed_module(std::move(ir));
    module.output_names = std::move(output_names);
    return py::cast(std::move(module));
  });
}
