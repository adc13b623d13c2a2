#include "kiln/tpulang/graph.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>

#include "kiln/support/error.h"

namespace kiln::tpulang {
namespace {

const std::vector<std::string>& tpulang_dtypes() {
  static const std::vector<std::string> names = {"float32", "float16", "int8",  "uint8",
                                                 "int16",   "uint16",  "int32", "uint32"};
  return names;
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Zero points must fit the storage type, as MLIR's quant.uniform demands.
std::pair<int64_t, int64_t> storage_range(const std::string& dtype) {
  if (dtype == "int8") return {-128, 127};
  if (dtype == "uint8") return {0, 255};
  if (dtype == "int16") return {-32768, 32767};
  if (dtype == "uint16") return {0, 65535};
  if (dtype == "int32") return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  return {0, std::numeric_limits<uint32_t>::max()};
}

void check_quantization(const TensorNode& t, const std::vector<double>& scale, const std::vector<int64_t>& zp,
                        int64_t axis, const std::string& what) {
  if (scale.empty() && zp.empty()) return;
  if (is_float_dtype(t.dtype))
    throw Error(cat(what, ": tensor '", t.name, "' is ", t.dtype, "; scale and zero_point need an integer dtype"));
  const int64_t channels = t.shape.empty() ? 1 : t.shape[static_cast<size_t>(axis)];
  auto check_length = [&](size_t n, const char* field) {
    if (n > 1 && static_cast<int64_t>(n) != channels)
      throw Error(cat(what, ": ", field, " of tensor '", t.name, "' has one value per channel of axis ", axis))
          .expected(cat("1 or ", channels, " values"), std::to_string(n));
  };
  check_length(scale.size(), "scale");
  check_length(zp.size(), "zero_point");
  for (double s : scale)
    if (!(s > 0)) throw Error(cat(what, ": scale of tensor '", t.name, "' must be positive, found ", s));
  auto [lo, hi] = storage_range(t.dtype);
  for (int64_t z : zp)
    if (z < lo || z > hi)
      throw Error(cat(what, ": zero_point of tensor '", t.name, "' does not fit ", t.dtype))
          .expected(cat("[", lo, ", ", hi, "]"), std::to_string(z));
}

std::map<uint64_t, Graph*>& live_graphs() {
  static std::map<uint64_t, Graph*> graphs;
  return graphs;
}

std::unique_ptr<Graph>& global_graph() {
  static std::unique_ptr<Graph> graph;
  return graph;
}

const std::vector<std::string>& devices() {
  static const std::vector<std::string> names = {"cpu", "bm1684x", "bm1688", "cv183x"};
  return names;
}

}  // namespace

bool is_tpulang_dtype(const std::string& dtype) {
  return std::find(tpulang_dtypes().begin(), tpulang_dtypes().end(), dtype) != tpulang_dtypes().end();
}

bool is_float_dtype(const std::string& dtype) { return dtype == "float32" || dtype == "float16"; }

Tensor::Tensor(Shape shape, std::string name, std::string dtype, NDArray data, bool is_const, std::vector<double> scale,
               std::vector<int64_t> zero_point)
    : Tensor(current_graph().tensor(std::move(shape), std::move(name), std::move(dtype), std::move(data), is_const,
                                    std::move(scale), std::move(zero_point))) {}

const TensorNode& Tensor::node() const {
  if (!node_) throw Error("tensor is None (an absent operand) where a tensor is needed");
  return *node_;
}

void Tensor::quantization(const std::vector<double>& scale, const std::vector<int64_t>& zero_point,
                          const std::string& what) {
  check_quantization(node(), scale, zero_point, quant_axis(), what);
  auto set = [&](auto& field, const auto& value, const char* label) {
    if (value.empty()) return;
    if (!field.empty() && field != value)
      throw Error(cat(what, ": tensor '", node_->name, "' already carries another ", label));
    field = value;
  };
  set(node_->scale, scale, "scale");
  set(node_->zero_point, zero_point, "zero_point");
}

Attr Attr::boolean(bool v) {
  Attr a;
  a.kind = Kind::kBool;
  a.b = v;
  return a;
}
Attr Attr::i64(int64_t v) {
  Attr a;
  a.kind = Kind::kI64;
  a.i = v;
  return a;
}
Attr Attr::si32(int64_t v) {
  Attr a;
  a.kind = Kind::kSI32;
  a.i = v;
  return a;
}
Attr Attr::f64(double v) {
  Attr a;
  a.kind = Kind::kF64;
  a.f = v;
  return a;
}
Attr Attr::str(std::string v) {
  Attr a;
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}
Attr Attr::i64_array(std::vector<int64_t> v) {
  Attr a;
  a.kind = Kind::kI64Array;
  a.ints = std::move(v);
  return a;
}
Attr Attr::f64_array(std::vector<double> v) {
  Attr a;
  a.kind = Kind::kF64Array;
  a.floats = std::move(v);
  return a;
}

const Attr* Operator::attr(const std::string& name) const {
  for (const auto& [key, value] : attrs)
    if (key == name) return &value;
  return nullptr;
}

Graph::Graph(std::string device) : device_(std::move(device)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  if (std::find(devices().begin(), devices().end(), device_) == devices().end())
    throw Error(cat("tpulang: unknown device '", device_, "'")).expected("cpu, bm1684x, bm1688 or cv183x", device_);
  live_graphs()[id_] = this;
}

Graph::~Graph() { live_graphs().erase(id_); }

Graph* Graph::find(uint64_t id) {
  auto it = live_graphs().find(id);
  return it == live_graphs().end() ? nullptr : it->second;
}

Tensor Graph::tensor(Shape shape, std::string name, std::string dtype, NDArray data, bool is_const,
                     std::vector<double> scale, std::vector<int64_t> zero_point) {
  const std::string what = "tpulang.Tensor";
  if (!is_tpulang_dtype(dtype))
    throw Error(cat(what, ": unknown dtype '", dtype, "'"))
        .expected("float32, float16, int8, uint8, int16, uint16, int32 or uint32", dtype);
  for (int64_t d : shape)
    if (d <= 0) throw Error(cat(what, ": shape ", shape_text(shape), " has a dimension that is not positive"));
  if (data.defined() && data.shape() != shape)
    throw Error(cat(what, ": data of tensor '", name, "' does not match its shape"))
        .expected(shape_text(shape), shape_text(data.shape()));
  if (is_const && !data.defined()) throw Error(cat(what, ": const tensor '", name, "' needs data"));
  if (has_name(name)) throw Error(cat(what, ": name '", name, "' is already used in this graph"));
  auto node = std::make_shared<TensorNode>();
  node->graph_id = id_;
  node->name = name_or_fresh(name, data.defined() ? "weight" : "tensor");
  node->shape = std::move(shape);
  node->dtype = std::move(dtype);
  if (data.defined())
    node->data = data.dtype() == parse_dtype(node->dtype) ? data : data.cast(parse_dtype(node->dtype));
  node->is_const = is_const;
  Tensor t(node);
  t.quantization(scale, zero_point, what);
  tensors_.push_back(t);
  names_.insert(t.name());
  return t;
}

void Graph::check_owns(const Tensor& t, const std::string& op, const std::string& arg) const {
  if (!t.defined()) throw Error(cat("argument '", arg, "' is None")).op(op);
  if (t.graph_id() != id_)
    throw Error(cat("argument '", arg, "': tensor '", t.name(), "' belongs to another graph")).op(op);
}

std::string Graph::name_or_fresh(const std::string& name, const std::string& prefix) {
  if (!name.empty()) return name;
  std::string fresh;
  do fresh = cat(prefix, "_", next_name_++);
  while (has_name(fresh));
  return fresh;
}

void Graph::insert_op(Operator op) { operators_.push_back(std::move(op)); }

const Operator* Graph::producer(const Tensor& t) const {
  for (const Operator& op : operators_)
    for (const Tensor& out : op.outputs)
      if (out.same_as(t)) return &op;
  return nullptr;
}

void init(const std::string& device) { global_graph() = std::make_unique<Graph>(device); }

void deinit() { global_graph().reset(); }

Graph& current_graph() {
  if (!global_graph()) throw Error("tpulang: no current graph; call tpulang::init(device) first");
  return *global_graph();
}

}  // namespace kiln::tpulang
