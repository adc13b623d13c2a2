// Converters: control flow (If, Loop, Scan). Bodies are GraphProto attributes converted by
// the importer in a scope nested in the node's, so they read the outer graph's names.
//
// If becomes an IR `if` (or the taken branch, when the condition is known at import time);
// an If of several outputs becomes one `if` of a tuple, and an item of it per output.
// With a run-time condition, a branch that does not convert for the input shapes given
// becomes a run-time error (op `unreachable`) when the other branch converts.
// A Loop whose trip count and every iteration's condition are known at import time is
// unrolled: that keeps every value typed even when loop-carried shapes grow (scan outputs,
// sequences), and each iteration's counter is a constant, so the shape arithmetic inside the
// body folds. Any other Loop, and every Scan, becomes an IR `loop` (LoopNode) run as control
// flow; a carried tensor whose extents change across iterations (a body that grows it) is
// typed with those extents unknown ('?').
#include <limits>
#include <optional>

#include "frontend/onnx/converters/converter_util.h"
#include "kiln/attrs/control.h"
#include "kiln/attrs/indexing.h"
#include "kiln/attrs/transform.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"

namespace kiln::frontend {

namespace {

// Longer loops would make modules of unbounded size.
constexpr int64_t kMaxUnrolledIterations = 1 << 14;

const onnx::GraphProto& graph_attr(ConvertContext& c, const std::string& name) {
  const OnnxAttr* attr = c.attrs().find(name);
  if (!attr || !attr->graph) throw Error(cat(c.op_type(), " needs a graph attribute '", name, "'"));
  return *attr->graph;
}

bool bool_scalar(const NDArray& value, const std::string& what) {
  if (value.numel() != 1)
    throw std::move(Error(cat(what, " must hold one value")).expected("1 element", shape_str(value.shape())));
  return value.int_at(0) != 0;
}

Expr int64_scalar(int64_t v) { return make_constant(NDArray::scalar(DType::kInt64, static_cast<double>(v))); }
Expr bool_constant(bool v) { return make_constant(NDArray::scalar(DType::kBool, v ? 1.0 : 0.0)); }

// Slice `index` of `x` along `axis`, without that axis.
Expr take_slice(const Expr& x, int64_t axis, int64_t index) {
  return call_op("squeeze", {slice_axis(x, axis, index, index + 1)}, SqueezeAttrs{.axis = std::vector<int64_t>{axis}});
}

// The parts stacked along a new axis.
Expr stack(const std::vector<Expr>& parts, int64_t axis) {
  std::vector<Expr> expanded;
  for (const Expr& p : parts) expanded.push_back(call_op("expand_dims", {p}, ExpandDimsAttrs{.axis = axis}));
  if (expanded.size() == 1) return expanded[0];
  return call_op("concatenate", {make_tuple(expanded)}, ConcatenateAttrs{.axis = axis});
}

// ---- If ----

// Why both branches of an If had to be converted, and how to avoid that. Exporters such as
// torch.jit.script write each branch for the inputs it is taken with (a sample-rate switch
// whose branches expect differently sized audio), so the branch not meant for the shapes
// given may not convert at all, although ONNX Runtime, which runs only the branch taken,
// accepts the model. Fixing the inputs the condition depends on folds the If at import.
std::string run_time_condition_note(const ConvertContext& c) {
  std::vector<std::string> inputs;
  post_order_visit(c.input(0), [&](const Expr& e) {
    const auto* var = as<VarNode>(e);
    if (var && !c.constant_value(e)) inputs.push_back(var->name);
  });
  // "must be known at import time" is what `kiln onnx-test` retries with fixed inputs on.
  const std::string why = " must be known at import time for kiln to convert only the branch taken";
  if (inputs.empty()) return "the condition (input 0)" + why;
  std::vector<std::string> quoted, binds;
  for (const auto& name : inputs) {
    quoted.push_back("'" + name + "'");
    binds.push_back("--bind " + name + "=VALUE");
  }
  return cat("the condition depends on ", inputs.size() == 1 ? "input " : "inputs ", join(quoted), ", which", why,
             " (fix ", inputs.size() == 1 ? "it" : "them", " with kiln ", join(binds, " "), ")");
}

// A branch of an If: its outputs, or the error that stopped its conversion.
struct Branch {
  std::string which;  // "then_branch" or "else_branch"
  std::vector<Expr> outputs;
  std::optional<Error> failure;
};

Branch convert_branch(ConvertContext& c, const onnx::GraphProto& graph, const std::string& which) {
  try {
    return {which, c.convert_subgraph(graph, {}), std::nullopt};
  } catch (const Error& e) {
    return {which, {}, e};
  }
}

Error branch_error(const ConvertContext& c, const Branch& b) {
  return Error(cat(b.which, " cannot be converted (", b.failure->what(), "); ", run_time_condition_note(c)));
}

// A value of `type` that throws `message` when computed, or nullptr when `type` is not
// made of tensors.
Expr trap_of(const Type& type, const std::string& message) {
  if (const TensorTypeNode* t = as_tensor(type))
    return call_op("unreachable", {},
                   UnreachableAttrs{.message = message, .shape = t->shape, .dtype = std::string(dtype_name(t->dtype))});
  const TupleTypeNode* tuple = as_tuple(type);
  if (!tuple) return nullptr;
  std::vector<Expr> fields;
  for (const Type& f : tuple->fields) {
    fields.push_back(trap_of(f, message));
    if (!fields.back()) return nullptr;
  }
  return make_tuple(std::move(fields));
}

// Stands in for a branch that does not convert for the input shapes given, when the other
// one does: exporters write each branch for the inputs it is taken with, and ONNX Runtime
// runs only the branch taken, so such a model is valid whenever the failing branch is not
// taken. Each output becomes a trap typed like the good branch's, which throws (naming the
// If, the branch and the conversion error) only if the model takes the branch.
void replace_with_traps(ConvertContext& c, Branch& bad, const Branch& good, const onnx::GraphProto& bad_graph) {
  if (static_cast<size_t>(bad_graph.output_size()) != good.outputs.size()) throw branch_error(c, bad);
  const std::string message =
      cat("node '", c.node_label(), "': ", bad.which, " was not converted: ", bad.failure->what(),
          "; it cannot run with these input shapes");
  for (const Expr& out : good.outputs) {
    Expr trap = out ? trap_of(c.type_of(out), message) : nullptr;
    if (!trap) throw branch_error(c, bad);
    bad.outputs.push_back(trap);
  }
  c.warn(cat(bad.which, " does not convert for these input shapes (", bad.failure->what(),
             "); it becomes a run-time error, raised only if the model takes it"));
  bad.failure.reset();
}

ConvertResult convert_if(ConvertContext& c) {
  const onnx::GraphProto& then_graph = graph_attr(c, "then_branch");
  const onnx::GraphProto& else_graph = graph_attr(c, "else_branch");
  if (std::optional<NDArray> cond = c.constant_input(0))
    return c.convert_subgraph(bool_scalar(*cond, "If's condition") ? then_graph : else_graph, {});
  Branch then_b = convert_branch(c, then_graph, "then_branch");
  Branch else_b = convert_branch(c, else_graph, "else_branch");
  if (then_b.failure && else_b.failure) throw branch_error(c, then_b);
  if (then_b.failure) replace_with_traps(c, then_b, else_b, then_graph);
  if (else_b.failure) replace_with_traps(c, else_b, then_b, else_graph);
  const std::vector<Expr>& then_out = then_b.outputs;
  const std::vector<Expr>& else_out = else_b.outputs;
  if (then_out.size() != else_out.size())
    throw std::move(Error("If's branches give different numbers of outputs")
                        .expected(cat(then_out.size(), " (then_branch)"), cat(else_out.size(), " (else_branch)")));
  for (size_t k = 0; k < then_out.size(); ++k) {
    if (!then_out[k] || !else_out[k])
      throw Error(
          cat("output ", k, " of If is an optional that has a value in only one branch; ", run_time_condition_note(c)));
    Type then_type = c.type_of(then_out[k]), else_type = c.type_of(else_out[k]);
    if (!type_equal(then_type, else_type))
      throw std::move(Error(cat("output ", k, " of If has different types in its branches, which kiln needs equal; ",
                                run_time_condition_note(c)))
                          .expected(type_str(then_type) + " (then_branch)", type_str(else_type) + " (else_branch)"));
  }
  if (then_out.size() == 1) return std::vector<Expr>{make_if(c.input(0), then_out[0], else_out[0])};
  // One `if` for all outputs, so that a compiled If runs its branch once, not once per output.
  Expr both = make_if(c.input(0), make_tuple(then_out), make_tuple(else_out));
  std::vector<Expr> outputs;
  for (size_t k = 0; k < then_out.size(); ++k) outputs.push_back(make_tuple_get_item(both, static_cast<int>(k)));
  return outputs;
}

// ---- Loop ----

struct LoopBounds {
  std::optional<int64_t> trip_count;
  bool cond = true;
};

std::vector<Var> loop_params(ConvertContext& c, const std::vector<Expr>& carried) {
  std::vector<Var> params{make_var("iteration", tensor_type({}, DType::kInt64)),
                          make_var("cond", tensor_type({}, DType::kBool))};
  for (size_t k = 0; k < carried.size(); ++k) {
    if (!carried[k] || is_optional_none(carried[k])) throw Error(cat("loop-carried value ", k, " has no value"));
    params.push_back(make_var(cat("carried", k), c.type_of(carried[k])));
  }
  return params;
}

// The type of both tensors `a` and `b`, of one dtype and rank, with '?' where their extents
// differ; null when they are not such tensors.
Type widened_tensor_type(const Type& a, const Type& b) {
  const TensorTypeNode *ta = as_tensor(a), *tb = as_tensor(b);
  if (!ta || !tb || ta->dtype != tb->dtype || ta->shape.size() != tb->shape.size()) return nullptr;
  Shape shape = ta->shape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != tb->shape[d]) shape[d] = kAnyDim;
  return tensor_type(std::move(shape), ta->dtype);
}

// Widens the carried parameters whose body output has other extents; whether any changed.
bool widen_carried_params(ConvertContext& c, std::vector<Var>& params, const std::vector<Expr>& outs) {
  bool widened = false;
  for (size_t k = 2; k < params.size() && k - 1 < outs.size(); ++k) {
    if (!outs[k - 1]) continue;
    const Type declared = params[k]->type_annotation, next = c.type_of(outs[k - 1]);
    if (type_equal(declared, next)) continue;
    Type wider = widened_tensor_type(declared, next);
    if (!wider || type_equal(wider, declared)) continue;
    params[k] = make_var(params[k]->name, wider);
    widened = true;
  }
  return widened;
}

// The loop's results: final carried values, then the scan outputs.
std::vector<Expr> loop_results(const Expr& loop, size_t count) {
  std::vector<Expr> results;
  for (size_t k = 0; k < count; ++k) results.push_back(make_tuple_get_item(loop, static_cast<int>(k)));
  return results;
}

Function loop_function(std::vector<Var> params, const std::vector<Expr>& outs) {
  for (size_t k = 0; k < outs.size(); ++k)
    if (!outs[k] || is_optional_none(outs[k])) throw Error(cat("output ", k, " of the loop's body has no value"));
  return make_function(std::move(params), make_tuple(outs));
}

// ONNX gives the trip count and conditions as scalars or one-element tensors; the IR loop reads scalars.
Expr as_scalar(ConvertContext& c, const Expr& value, const std::string& what) {
  if (c.tensor_type_of(value, what).ndim() == 0) return value;
  return call_op("reshape", {value}, ReshapeAttrs{.newshape = {}});
}

// A Loop with a trip count or condition known only at run time: an IR loop.
ConvertResult convert_loop_at_run_time(ConvertContext& c, const onnx::GraphProto& body,
                                       const std::vector<Expr>& carried, size_t n_scans) {
  try {
    Expr trip = c.has_input(0)
                    ? as_scalar(c, c.input(0), "input 0")
                    : make_constant(NDArray::from_vector<int64_t>({}, {std::numeric_limits<int64_t>::max()}));
    Expr cond = c.has_input(1) ? as_scalar(c, c.input(1), "input 1") : bool_constant(true);
    std::vector<Var> params = loop_params(c, carried);
    std::vector<Expr> outs = c.convert_subgraph(body, std::vector<Expr>(params.begin(), params.end()));
    // Each widening makes an extent '?' for good, so this ends.
    while (widen_carried_params(c, params, outs))
      outs = c.convert_subgraph(body, std::vector<Expr>(params.begin(), params.end()));
    if (outs.size() != 1 + carried.size() + n_scans)
      throw std::move(Error("Loop's body gives the wrong number of outputs")
                          .expected(cat(1 + carried.size() + n_scans), cat(outs.size())));
    if (outs[0]) outs[0] = as_scalar(c, outs[0], "the body's condition");
    Expr loop = make_loop(trip, cond, carried, loop_function(params, outs));
    c.type_of(loop);
    return loop_results(loop, carried.size() + n_scans);
  } catch (const Error& e) {
    // "must be known at import time" lets `kiln onnx-test` retry with the inputs fixed, which unrolls.
    throw Error(cat("Loop cannot run as a loop (", e.what(),
                    "); its trip count and condition must be known at import time for kiln to unroll it"));
  }
}

std::optional<LoopBounds> constant_loop_bounds(ConvertContext& c) {
  LoopBounds bounds;
  if (c.has_input(0)) {
    std::optional<NDArray> m = c.constant_input(0);
    if (!m) return std::nullopt;
    check(m->numel() == 1, "Loop's trip count must be a scalar, found ", m->numel(), " values");
    bounds.trip_count = m->int_at(0);
  }
  if (c.has_input(1)) {
    std::optional<NDArray> cond = c.constant_input(1);
    if (!cond) return std::nullopt;
    bounds.cond = bool_scalar(*cond, "Loop's condition");
  }
  return bounds;
}

ConvertResult convert_loop(ConvertContext& c) {
  const onnx::GraphProto& body = graph_attr(c, "body");
  std::vector<Expr> carried(c.inputs().begin() + std::min<size_t>(2, c.num_inputs()), c.inputs().end());
  const size_t n_carried = carried.size();
  if (c.num_outputs() < n_carried)
    throw std::move(Error("Loop has fewer outputs than loop-carried values")
                        .expected(cat("at least ", n_carried), cat(c.num_outputs())));
  const size_t n_scans = c.num_outputs() - n_carried;
  const std::optional<LoopBounds> known = constant_loop_bounds(c);
  if (!known) return convert_loop_at_run_time(c, body, carried, n_scans);
  const LoopBounds bounds = *known;
  const std::vector<Expr> initial = carried;
  std::vector<std::vector<Expr>> scans(n_scans);
  bool cond = bounds.cond;
  for (int64_t i = 0; cond && (!bounds.trip_count || i < *bounds.trip_count); ++i) {
    // Longer loops run as loops.
    if (i >= kMaxUnrolledIterations) return convert_loop_at_run_time(c, body, initial, n_scans);
    std::vector<Expr> args{int64_scalar(i), bool_constant(cond)};
    args.insert(args.end(), carried.begin(), carried.end());
    std::vector<Expr> outs = c.convert_subgraph(body, args);
    if (outs.size() != 1 + n_carried + n_scans)
      throw std::move(Error("Loop's body gives the wrong number of outputs")
                          .expected(cat(1 + n_carried + n_scans, " (condition, ", n_carried, " carried, ", n_scans,
                                        " scan outputs)"),
                                    cat(outs.size())));
    std::optional<NDArray> next = outs[0] ? c.constant_value(outs[0]) : std::nullopt;
    if (!next) return convert_loop_at_run_time(c, body, initial, n_scans);
    cond = bool_scalar(*next, "Loop's condition output");
    std::copy(outs.begin() + 1, outs.begin() + 1 + static_cast<std::ptrdiff_t>(n_carried), carried.begin());
    for (size_t k = 0; k < n_scans; ++k) {
      if (!outs[1 + n_carried + k]) throw Error(cat("scan output ", k, " of Loop's body has no value"));
      scans[k].push_back(outs[1 + n_carried + k]);
    }
  }
  std::vector<Expr> outputs = carried;
  for (size_t k = 0; k < n_scans; ++k) {
    if (scans[k].empty()) return convert_loop_at_run_time(c, body, initial, n_scans);
    outputs.push_back(stack(scans[k], 0));
  }
  // An optional without value among the results is passed on as such.
  for (Expr& e : outputs)
    if (!e) e = optional_none();
  return outputs;
}

// ---- Scan ----

struct ScanAttrs {
  size_t num_scan_inputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

ScanAttrs scan_attrs(ConvertContext& c, size_t n_scan_outputs) {
  ScanAttrs a;
  a.num_scan_inputs = static_cast<size_t>(c.attrs().get_int("num_scan_inputs"));
  a.input_axes = c.attrs().get_ints("scan_input_axes", std::vector<int64_t>(a.num_scan_inputs, 0));
  a.input_directions = c.attrs().get_ints("scan_input_directions", std::vector<int64_t>(a.num_scan_inputs, 0));
  a.output_axes = c.attrs().get_ints("scan_output_axes", std::vector<int64_t>(n_scan_outputs, 0));
  a.output_directions = c.attrs().get_ints("scan_output_directions", std::vector<int64_t>(n_scan_outputs, 0));
  check(a.input_axes.size() == a.num_scan_inputs && a.input_directions.size() == a.num_scan_inputs,
        "Scan's scan_input_axes and scan_input_directions need one entry per scan input (", a.num_scan_inputs, ")");
  check(a.output_axes.size() == n_scan_outputs && a.output_directions.size() == n_scan_outputs,
        "Scan's scan_output_axes and scan_output_directions need one entry per scan output (", n_scan_outputs, ")");
  return a;
}

// Element `index` (an int64 scalar) of `x` along `axis`, without that axis.
Expr take_at(const Expr& x, const Expr& index, int64_t axis) {
  return call_op("take", {x, index}, TakeAttrs{.axis = axis, .mode = "fast"});
}

// `x` in reverse order along axis 0, which has `length` elements.
Expr reverse_axis0(const Expr& x, int64_t length) {
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) order[static_cast<size_t>(i)] = length - 1 - i;
  return call_op("take", {x, make_constant(NDArray::from_vector<int64_t>({length}, order))},
                 TakeAttrs{.axis = 0, .mode = "fast"});
}

// `x` with its axis 0 moved to `axis`.
Expr move_axis0_to(const Expr& x, int64_t axis, int64_t rank) {
  if (axis == 0) return x;
  std::vector<int64_t> axes;
  for (int64_t d = 1; d < rank; ++d) {
    if (static_cast<int64_t>(axes.size()) == axis) axes.push_back(0);
    axes.push_back(d);
  }
  if (static_cast<int64_t>(axes.size()) == axis) axes.push_back(0);
  return call_op("transpose", {x}, TransposeAttrs{.axes = axes});
}

// One scan over `state` and `scan_inputs` (opset 9 semantics) as an IR loop of `length`
// iterations whose body reads element t (or length-1-t, reversed) of each scan input;
// returns the final state then the scan outputs.
std::vector<Expr> run_scan(ConvertContext& c, const onnx::GraphProto& body, std::vector<Expr> state,
                           const std::vector<Expr>& scan_inputs, const ScanAttrs& a, size_t n_scan_outputs) {
  int64_t length = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < scan_inputs.size(); ++j) {
    const Shape& shape = c.tensor_type_of(scan_inputs[j], cat("scan input ", j)).shape;
    int64_t axis = normalize_onnx_axis(a.input_axes[j], static_cast<int64_t>(shape.size()), "scan_input_axes");
    axes.push_back(axis);
    if (shape[axis] == kAnyDim) throw Error(cat("Scan needs a static length along axis ", axis, " of scan input ", j));
    if (length >= 0 && shape[axis] != length)
      throw std::move(Error(cat("scan input ", j, " has another scan length than scan input 0"))
                          .expected(cat(length), cat(shape[axis])));
    length = shape[axis];
  }
  check(length >= 0, "Scan needs at least one scan input");
  std::vector<Var> params = loop_params(c, state);
  std::vector<Expr> args(params.begin() + 2, params.end());
  const Expr& t = params[0];
  const Expr reversed_t = call_op("subtract", {int64_scalar(length - 1), t});
  for (size_t j = 0; j < scan_inputs.size(); ++j)
    args.push_back(take_at(scan_inputs[j], a.input_directions[j] ? reversed_t : t, axes[j]));
  std::vector<Expr> results = c.convert_subgraph(body, args);
  check(results.size() == state.size() + n_scan_outputs, "Scan's body gives ", results.size(), " outputs; expected ",
        state.size() + n_scan_outputs);
  results.insert(results.begin(), params[1]);
  Expr loop = make_loop(int64_scalar(length), bool_constant(true), state, loop_function(params, results));
  c.type_of(loop);
  std::vector<Expr> outputs = loop_results(loop, state.size() + n_scan_outputs);
  for (size_t k = 0; k < n_scan_outputs; ++k) {
    Expr& out = outputs[state.size() + k];
    if (a.output_directions[k]) out = reverse_axis0(out, length);
    int64_t rank = c.tensor_type_of(out, cat("scan output ", k)).ndim();
    out = move_axis0_to(out, normalize_onnx_axis(a.output_axes[k], rank, "scan_output_axes"), rank);
  }
  return outputs;
}

ConvertResult convert_scan_v9(ConvertContext& c) {
  const onnx::GraphProto& body = graph_attr(c, "body");
  size_t n_scan_inputs = static_cast<size_t>(c.attrs().get_int("num_scan_inputs"));
  check(n_scan_inputs <= c.num_inputs(), "Scan's num_scan_inputs (", n_scan_inputs, ") exceeds its ", c.num_inputs(),
        " inputs");
  size_t n_state = c.num_inputs() - n_scan_inputs;
  check(c.num_outputs() >= n_state, "Scan has fewer outputs than state variables");
  size_t n_scan_outputs = c.num_outputs() - n_state;
  ScanAttrs a = scan_attrs(c, n_scan_outputs);
  std::vector<Expr> state(c.inputs().begin(), c.inputs().begin() + static_cast<std::ptrdiff_t>(n_state));
  std::vector<Expr> scan_inputs(c.inputs().begin() + static_cast<std::ptrdiff_t>(n_state), c.inputs().end());
  return run_scan(c, body, state, scan_inputs, a, n_scan_outputs);
}

// Opset 8: a leading batch axis on every input and output, the scan axis is 1, and an
// optional sequence_lens first input. Each batch entry is scanned on its own.
ConvertResult convert_scan_v8(ConvertContext& c) {
  const onnx::GraphProto& body = graph_attr(c, "body");
  if (c.has_input(0)) throw Error("Scan's sequence_lens (input 0) is not supported; leave it empty");
  size_t n_scan_inputs = static_cast<size_t>(c.attrs().get_int("num_scan_inputs"));
  check(n_scan_inputs + 1 <= c.num_inputs(), "Scan's num_scan_inputs (", n_scan_inputs, ") exceeds its inputs");
  size_t n_state = c.num_inputs() - 1 - n_scan_inputs;
  check(c.num_outputs() >= n_state, "Scan has fewer outputs than state variables");
  size_t n_scan_outputs = c.num_outputs() - n_state;
  ScanAttrs a;
  a.num_scan_inputs = n_scan_inputs;
  a.input_axes.assign(n_scan_inputs, 0);
  a.input_directions = c.attrs().get_ints("directions", std::vector<int64_t>(n_scan_inputs, 0));
  check(a.input_directions.size() == n_scan_inputs, "Scan's directions needs one entry per scan input");
  a.output_axes.assign(n_scan_outputs, 0);
  a.output_directions.assign(n_scan_outputs, 0);
  int64_t batch = c.input_shape(1)[0];
  if (batch == kAnyDim) throw Error("Scan (opset 8) needs a static batch size");
  std::vector<std::vector<Expr>> per_batch(c.num_outputs());
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Expr> state, scan_inputs;
    for (size_t i = 1; i < c.num_inputs(); ++i)
      (i <= n_state ? state : scan_inputs).push_back(take_slice(c.input(i), 0, b));
    std::vector<Expr> results = run_scan(c, body, state, scan_inputs, a, n_scan_outputs);
    for (size_t k = 0; k < results.size(); ++k) per_batch[k].push_back(results[k]);
  }
  std::vector<Expr> outputs;
  for (const auto& parts : per_batch) outputs.push_back(stack(parts, 0));
  return outputs;
}

}  // namespace

void register_control_flow_converters(ConverterRegistry& r) {
  r.add("If", 1, convert_if);
  r.add("Loop", 1, convert_loop);
  r.add("Scan", 8, convert_scan_v8);
  r.add("Scan", 9, convert_scan_v9);
}

}  // namespace kiln::frontend
