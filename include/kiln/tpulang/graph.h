// TpuLang's graph (sophgo tpu-mlir's network builder, in C++): tensors and the operators
// that connect them. A Graph owns its tensors; a Tensor is a shared handle naming one of them
// and the graph it belongs to, so an op given tensors of two graphs (or of a graph already
// released) can say so. The op functions are in kiln/tpulang/ops.h; writing a graph as Top
// MLIR in kiln/tpulang/emit.h; running it through kiln in kiln/tpulang/to_kiln.h.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime/ndarray.h"

namespace kiln::tpulang {

class Graph;

// The element types TpuLang accepts, by TpuLang's names.
bool is_tpulang_dtype(const std::string& dtype);
bool is_float_dtype(const std::string& dtype);  // float32, float16

struct TensorNode {
  uint64_t graph_id = 0;
  std::string name;
  Shape shape;
  std::string dtype;
  NDArray data;  // defined for weights (written as top.Weight)
  bool is_const = false;
  // Quantization: empty scale and zero_point for none, one value per tensor, or one per
  // channel (axis 0 of a weight, axis 1 of an activation; see quant_axis()).
  std::vector<double> scale;
  std::vector<int64_t> zero_point;
};

class Tensor {
 public:
  Tensor() = default;  // "None": an absent optional operand
  // A tensor of the current graph (init()): TpuLang's Tensor(shape, name, dtype, data,
  // is_const, scale, zero_point). With data it is a weight; an empty name is generated.
  explicit Tensor(Shape shape, std::string name = {}, std::string dtype = "float32", NDArray data = {},
                  bool is_const = false, std::vector<double> scale = {}, std::vector<int64_t> zero_point = {});

  bool defined() const { return node_ != nullptr; }
  const std::string& name() const { return node().name; }
  const Shape& shape() const { return node().shape; }
  int64_t rank() const { return static_cast<int64_t>(node().shape.size()); }
  const std::string& dtype() const { return node().dtype; }
  const NDArray& data() const { return node().data; }
  bool is_weight() const { return node().data.defined(); }
  bool is_const() const { return node().is_const; }
  bool is_quantized() const { return !node().scale.empty() || !node().zero_point.empty(); }
  const std::vector<double>& scale() const { return node().scale; }
  const std::vector<int64_t>& zero_point() const { return node().zero_point; }
  // The axis a per-channel scale or zero point runs along.
  int64_t quant_axis() const { return is_weight() || rank() < 2 ? 0 : 1; }
  uint64_t graph_id() const { return node().graph_id; }

  // Sets (or checks against what is set) the quantization; `what` names the op and
  // argument in errors. An empty list leaves that part as it is.
  void quantization(const std::vector<double>& scale, const std::vector<int64_t>& zero_point, const std::string& what);

  bool same_as(const Tensor& other) const { return node_ == other.node_; }

 private:
  friend class Graph;
  explicit Tensor(std::shared_ptr<TensorNode> node) : node_(std::move(node)) {}
  const TensorNode& node() const;
  std::shared_ptr<TensorNode> node_;
};

// An attribute value, typed as Top's op definitions type it.
struct Attr {
  enum class Kind { kBool, kI64, kSI32, kF64, kString, kI64Array, kF64Array };
  Kind kind = Kind::kI64;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  static Attr boolean(bool v);
  static Attr i64(int64_t v);
  static Attr si32(int64_t v);
  static Attr f64(double v);
  static Attr str(std::string v);
  static Attr i64_array(std::vector<int64_t> v);
  static Attr f64_array(std::vector<double> v);
};

using AttrList = std::vector<std::pair<std::string, Attr>>;

struct Operator {
  std::string type;            // "top.Conv"
  std::vector<Tensor> inputs;  // an undefined Tensor is an absent operand (top.None)
  std::vector<Tensor> outputs;
  AttrList attrs;
  const Attr* attr(const std::string& name) const;
};

class Graph {
 public:
  explicit Graph(std::string device = "cpu");
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // The live graph of that id, or null (released).
  static Graph* find(uint64_t id);

  // TpuLang's Tensor(...) in this graph; see Tensor's constructor.
  Tensor tensor(Shape shape, std::string name = {}, std::string dtype = "float32", NDArray data = {},
                bool is_const = false, std::vector<double> scale = {}, std::vector<int64_t> zero_point = {});

  uint64_t id() const { return id_; }
  const std::string& device() const { return device_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Operator>& operators() const { return operators_; }

  // Used by the op functions: checks that `t` belongs here, naming op and argument.
  void check_owns(const Tensor& t, const std::string& op, const std::string& arg) const;
  // The name given, or a fresh one from `prefix`.
  std::string name_or_fresh(const std::string& name, const std::string& prefix);
  bool has_name(const std::string& name) const { return names_.count(name) > 0; }
  void insert_op(Operator op);
  // The operator producing `t`, or null (inputs and weights).
  const Operator* producer(const Tensor& t) const;

 private:
  uint64_t id_;
  std::string device_;
  std::vector<Tensor> tensors_;
  std::set<std::string> names_;
  std::vector<Operator> operators_;
  int64_t next_name_ = 0;
};

// TpuLang's global graph: init(device) creates it, deinit() releases it (tensors of the
// released graph can no longer be used). The devices are TpuLang's: cpu, bm1684x, bm1688,
// cv183x.
void init(const std::string& device);
void deinit();
Graph& current_graph();  // throws kiln::Error when init() has not been called

}  // namespace kiln::tpulang
