// Building small ONNX models in C++ with the protobuf API, and running Python (numpy) to
// compute reference results, for the frontend tests.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/frontend/onnx.h"
#include "kiln/interp/interpreter.h"
#include "kiln/runtime/ndarray.h"
#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "op_test_util.h"
#include "test_util.h"

namespace kiln::testing {

// Dimensions given as -1 become the symbolic dimension "N".
class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("kiln-test");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void import_domain(const std::string& domain, int64_t version) {
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }

  OnnxModelBuilder& input(const std::string& name, const std::vector<int64_t>& dims,
                          int elem_type = onnx::TensorProto::FLOAT) {
    value_info(graph().add_input(), name, dims, elem_type);
    return *this;
  }
  OnnxModelBuilder& output(const std::string& name, const std::vector<int64_t>& dims = {},
                           int elem_type = onnx::TensorProto::FLOAT) {
    value_info(graph().add_output(), name, dims, elem_type);
    return *this;
  }
  // An output whose shape the test does not spell out. ONNX's checker wants some shape; kiln
  // does not compare outputs with their declarations, so a rank-0 one serves.
  OnnxModelBuilder& output_any(const std::string& name, int elem_type = onnx::TensorProto::FLOAT) {
    return output(name, {}, elem_type);
  }

  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op_type);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  OnnxModelBuilder& initializer(const std::string& name, const NDArray& value) {
    to_proto(value, name, graph().add_initializer());
    return *this;
  }

  std::string bytes() const { return model_.SerializeAsString(); }

  static void to_proto(const NDArray& value, const std::string& name, onnx::TensorProto* t) {
    t->set_name(name);
    t->set_data_type(onnx_type(value.dtype()));
    for (int64_t d : value.shape()) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(value.raw()), value.nbytes()));
  }

  static int onnx_type(DType t) {
    switch (t) {
      case DType::kFloat32: return onnx::TensorProto::FLOAT;
      case DType::kFloat64: return onnx::TensorProto::DOUBLE;
      case DType::kInt32: return onnx::TensorProto::INT32;
      case DType::kInt64: return onnx::TensorProto::INT64;
      case DType::kBool: return onnx::TensorProto::BOOL;
      case DType::kInt8: return onnx::TensorProto::INT8;
      case DType::kUInt8: return onnx::TensorProto::UINT8;
      case DType::kFloat16: return onnx::TensorProto::FLOAT16;
      default: return onnx::TensorProto::UNDEFINED;
    }
  }

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims,
                         int elem_type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0)
        dim->set_dim_param("N");
      else
        dim->set_dim_value(d);
    }
  }

  onnx::ModelProto model_;
};

inline void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, double v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(v));
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const NDArray& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  OnnxModelBuilder::to_proto(v, "", a->mutable_t());
}

inline NDArray ints(const std::vector<int64_t>& v) {
  return NDArray::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// Whether `text` contains `part`, printing both when it does not.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "'\n  does not contain\n'" << part << "'";
}

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "kiln_onnx_XXXXXX").string();
    path_ = mkdtemp(templ.data()) ? templ : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Runs `script` with /usr/bin/python3 (which has numpy) in `dir`, where the inputs were saved
// as <name>.npy; the script writes out.npy, which is returned.
inline NDArray numpy_reference(const TempDir& dir, const std::vector<std::pair<std::string, NDArray>>& inputs,
                               const std::string& script) {
  for (const auto& [name, value] : inputs) write_npy(dir.file(name + ".npy"), value);
  write_file(dir.file("ref.py"), "import numpy as np\n" + script + "\nnp.save('out.npy', np.ascontiguousarray(out))\n");
  std::string command = "cd '" + dir.path() + "' && /usr/bin/python3 ref.py";
  EXPECT_EQ(std::system(command.c_str()), 0) << script;
  return read_npy(dir.file("out.npy"));
}

// The model's outputs for `inputs`, imported and run through the interpreter.
inline std::vector<NDArray> run_model(OnnxModelBuilder& b, const std::vector<NDArray>& inputs) {
  OnnxModel m = from_onnx_bytes(b.bytes(), {}, "test.onnx");
  std::vector<Value> args(inputs.begin(), inputs.end());
  return interpret(bind_params(m.module, m.params), "main", args).flatten();
}

}  // namespace kiln::testing
