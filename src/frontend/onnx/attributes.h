// A node's attributes parsed into typed values, with getters that name the attribute
// and the expected kind when a model gets it wrong.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/runtime/attrs.h"
#include "kiln/runtime/ndarray.h"

namespace kiln::frontend {

struct OnnxAttr {
  enum class Kind { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kOther };
  Kind kind = Kind::kOther;
  std::string type_name;  // ONNX's name of the kind: "INT", "FLOATS", "GRAPH" ...
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  NDArray tensor;
  const onnx::GraphProto* graph = nullptr;  // owned by the ModelProto

  // The value as a kiln attribute (ints -> list of ints, ...); throws for tensors and graphs.
  AttrValue to_attr_value(const std::string& name) const;
};

class OnnxAttrs {
 public:
  OnnxAttrs() = default;
  // Tensor attributes with external data are read relative to `base_dir`.
  OnnxAttrs(const google::protobuf::RepeatedPtrField<onnx::AttributeProto>& protos, const std::string& base_dir);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  const OnnxAttr* find(const std::string& name) const;
  const std::map<std::string, OnnxAttr>& all() const { return values_; }

  // Required getters throw when the attribute is missing; all throw on a wrong kind.
  int64_t get_int(const std::string& name) const;
  int64_t get_int(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name) const;
  double get_float(const std::string& name, double fallback) const;
  const std::string& get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name) const;
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback) const;
  std::vector<double> get_floats(const std::string& name) const;
  std::vector<double> get_floats(const std::string& name, const std::vector<double>& fallback) const;
  const NDArray& get_tensor(const std::string& name) const;

 private:
  const OnnxAttr& get(const std::string& name, OnnxAttr::Kind kind) const;

  std::map<std::string, OnnxAttr> values_;
};

}  // namespace kiln::frontend
