// kiln._core.tpulang: TpuLang's builder (kiln/tpulang/*.h) for Python, name for name and
// argument for argument. Python's None, a single number or a list all arrive here as objects
// and become the C++ side's "empty list / one value / values", so the checks and their
// messages stay those of the C++ ops.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "kiln/runtime/npy.h"
#include "kiln/support/error.h"
#include "kiln/tpulang/emit.h"
#include "kiln/tpulang/ops.h"
#include "kiln/tpulang/to_kiln.h"

namespace py = pybind11;

namespace kiln::python {

// The kiln.ir.IRModule core object of a module whose outputs have these names (core.cc).
using ModuleWrapper = std::function<py::object(IRModule, std::vector<std::string>)>;

namespace {

using tpulang::Ints;
using tpulang::Tensor;

template <class T>
std::vector<T> list_of(const py::object& value) {
  if (value.is_none()) return {};
  if (py::isinstance<py::sequence>(value) && !py::isinstance<py::str>(value)) return value.cast<std::vector<T>>();
  return {value.cast<T>()};
}

Ints ints(const py::object& value) { return list_of<int64_t>(value); }
std::vector<double> doubles(const py::object& value) { return list_of<double>(value); }
std::string text(const py::object& value) { return value.is_none() ? std::string() : value.cast<std::string>(); }
Tensor tensor(const py::object& value) { return value.is_none() ? Tensor() : value.cast<Tensor>(); }

NDArray array_of(const py::object& data) {
  if (data.is_none()) return {};
  py::bytes npy = py::module_::import("kiln.runtime").attr("to_npy")(data, "tensor data");
  return parse_npy(std::string(npy), "tensor data");
}

Tensor make_tensor(const Shape& shape, const py::object& name, const std::string& dtype, const py::object& data,
                   bool is_const, const py::object& scale, const py::object& zero_point) {
  return Tensor(shape, text(name), dtype, array_of(data), is_const, doubles(scale), ints(zero_point));
}

std::vector<Tensor> tensors(const std::vector<py::object>& values) {
  std::vector<Tensor> out;
  for (const py::object& v : values) out.push_back(tensor(v));
  return out;
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor")
      .def(py::init(&make_tensor), py::arg("shape"), py::arg("name") = py::none(), py::arg("dtype") = "float32",
           py::arg("data") = py::none(), py::arg("is_const") = false, py::arg("scale") = py::none(),
           py::arg("zero_point") = py::none())
      .def_property_readonly("name", &Tensor::name)
      .def_property_readonly("shape", &Tensor::shape)
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("is_const", &Tensor::is_const)
      .def_property_readonly("is_weight", &Tensor::is_weight)
      .def_property_readonly("scale", &Tensor::scale)
      .def_property_readonly("zero_point", &Tensor::zero_point)
      .def_property_readonly("npy", [](const Tensor& t) { return py::bytes(serialize_npy(t.data())); })
      .def("__repr__", [](const Tensor& t) {
        return cat("tpulang.Tensor(name='", t.name(), "', shape=", py::str(py::cast(t.shape())).cast<std::string>(),
                   ", dtype='", t.dtype(), "')");
      });
}

void bind_convolutions(py::module_& m) {
  const auto none = py::none();
  m.def(
      "conv",
      [](const Tensor& input, const Tensor& weight, const py::object& bias, const py::object& stride,
         const py::object& dilation, const py::object& pad, int64_t group, const py::object& out_dtype,
         const py::object& out_name) {
        return tpulang::conv(input, weight, tensor(bias), ints(stride), ints(dilation), ints(pad), group,
                             text(out_dtype), text(out_name));
      },
      "Float convolution, NCHW x [oc, ic/group, kh, kw]; stride/dilation [h, w], pad [top, bottom, left, right].",
      py::arg("input"), py::arg("weight"), py::arg("bias") = none, py::arg("stride") = none, py::arg("dilation") = none,
      py::arg("pad") = none, py::arg("group") = 1, py::arg("out_dtype") = none, py::arg("out_name") = none);
  m.def(
      "conv_v2",
      [](const Tensor& tensor_i, const Tensor& weight, const py::object& bias, const py::object& stride,
         const py::object& dilation, const py::object& pad, int64_t group, const py::object& input_zp,
         const py::object& weight_zp, const py::object& out_dtype, const py::object& out_name) {
        return tpulang::conv_v2(tensor_i, weight, tensor(bias), ints(stride), ints(dilation), ints(pad), group,
                                ints(input_zp), ints(weight_zp), text(out_dtype), text(out_name));
      },
      "Convolution that also takes integer inputs (input_zp: 1 or ic values, weight_zp: 1 or oc values); out_dtype "
      "defaults to the input's (float) or int32.",
      py::arg("tensor_i"), py::arg("weight"), py::arg("bias") = none, py::arg("stride") = none,
      py::arg("dilation") = none, py::arg("pad") = none, py::arg("group") = 1, py::arg("input_zp") = none,
      py::arg("weight_zp") = none, py::arg("out_dtype") = none, py::arg("out_name") = none);
  m.def(
      "deconv",
      [](const Tensor& input, const Tensor& weight, const py::object& bias, const py::object& stride,
         const py::object& dilation, const py::object& pad, const py::object& output_padding, int64_t group,
         const py::object& out_dtype, const py::object& out_name) {
        return tpulang::deconv(input, weight, tensor(bias), ints(stride), ints(dilation), ints(pad),
                               ints(output_padding), group, text(out_dtype), text(out_name));
      },
      "Transposed convolution, weight [ic, oc / group, kh, kw].", py::arg("input"), py::arg("weight"),
      py::arg("bias") = none, py::arg("stride") = none, py::arg("dilation") = none, py::arg("pad") = none,
      py::arg("output_padding") = none, py::arg("group") = 1, py::arg("out_dtype") = none, py::arg("out_name") = none);
  m.def(
      "matmul",
      [](const Tensor& input, const Tensor& right, const py::object& bias, bool right_transpose, bool left_transpose,
         bool output_transpose, bool keep_dims, const py::object& out_dtype, const py::object& out_name) {
        return tpulang::matmul(input, right, tensor(bias), right_transpose, left_transpose, output_transpose, keep_dims,
                               text(out_dtype), text(out_name));
      },
      "[..., m, k] x [..., k, n] with broadcast batch dims; bias of n values.", py::arg("input"), py::arg("right"),
      py::arg("bias") = none, py::arg("right_transpose") = false, py::arg("left_transpose") = false,
      py::arg("output_transpose") = false, py::arg("keep_dims") = true, py::arg("out_dtype") = none,
      py::arg("out_name") = none);
}

using QuantBinary = Tensor (*)(const Tensor&, const Tensor&, std::vector<double>, Ints, const std::string&,
                               const std::string&);

void bind_binary(py::module_& m, const char* name, QuantBinary op) {
  const auto none = py::none();
  m.def(
      name,
      [op](const Tensor& a, const Tensor& b, const py::object& scale, const py::object& zero_point,
           const py::object& out_dtype, const py::object& out_name) {
        return op(a, b, doubles(scale), ints(zero_point), text(out_dtype), text(out_name));
      },
      "Elementwise, numpy broadcasting; scale / zero_point: 3 values (input 0, input 1, output) quantizing them.",
      py::arg("tensor_i0"), py::arg("tensor_i1"), py::arg("scale") = none, py::arg("zero_point") = none,
      py::arg("out_dtype") = none, py::arg("out_name") = none);
}

using Unary = Tensor (*)(const Tensor&, const std::string&);

void bind_unary(py::module_& m, const char* name, Unary op) {
  m.def(
      name, [op](const Tensor& input, const py::object& out_name) { return op(input, text(out_name)); },
      "Elementwise activation of a float tensor.", py::arg("input"), py::arg("out_name") = py::none());
}

void bind_elementwise(py::module_& m) {
  const auto none = py::none();
  bind_binary(m, "add", &tpulang::add);
  bind_binary(m, "sub", &tpulang::sub);
  bind_binary(m, "mul", &tpulang::mul);
  m.def(
      "div",
      [](const Tensor& a, const Tensor& b, const py::object& out_name) { return tpulang::div(a, b, text(out_name)); },
      "Elementwise division with numpy broadcasting.", py::arg("tensor_i0"), py::arg("tensor_i1"),
      py::arg("out_name") = none);
  bind_unary(m, "relu", &tpulang::relu);
  bind_unary(m, "sigmoid", &tpulang::sigmoid);
  bind_unary(m, "tanh", &tpulang::tanh);
  bind_unary(m, "gelu", &tpulang::gelu);
  m.def(
      "leaky_relu",
      [](const Tensor& input, double slope, const py::object& out_name) {
        return tpulang::leaky_relu(input, slope, text(out_name));
      },
      "x if x > 0 else negative_slope * x.", py::arg("input"), py::arg("negative_slope") = 0.01,
      py::arg("out_name") = none);
  m.def(
      "prelu",
      [](const Tensor& input, const Tensor& slope, const py::object& out_name) {
        return tpulang::prelu(input, slope, text(out_name));
      },
      "Leaky ReLU with a learned slope per channel.", py::arg("input"), py::arg("slope"), py::arg("out_name") = none);
  m.def(
      "softmax",
      [](const Tensor& input, int64_t axis, const py::object& out_name) {
        return tpulang::softmax(input, axis, text(out_name));
      },
      "Softmax along axis.", py::arg("input"), py::arg("axis"), py::arg("out_name") = none);
  m.def(
      "clamp",
      [](const Tensor& input, double min, double max, const py::object& out_name) {
        return tpulang::clamp(input, min, max, text(out_name));
      },
      "min(max(input, min), max) (Top's Clip).", py::arg("input"), py::arg("min"), py::arg("max"),
      py::arg("out_name") = none);
  m.def(
      "layer_norm",
      [](const Tensor& input, const py::object& gamma, const py::object& beta, double epsilon, int64_t axis,
         const py::object& out_name) {
        return tpulang::layer_norm(input, tensor(gamma), tensor(beta), epsilon, axis, text(out_name));
      },
      "Normalises the dims from axis on; gamma and beta (optional) have their shape.", py::arg("input"),
      py::arg("gamma") = none, py::arg("beta") = none, py::arg("epsilon") = 1e-5, py::arg("axis") = -1,
      py::arg("out_name") = none);
}

void bind_pools_and_shapes(py::module_& m) {
  const auto none = py::none();
  m.def(
      "maxpool",
      [](const Tensor& input, const py::object& kernel, const py::object& stride, const py::object& pad, bool ceil_mode,
         const py::object& out_name) {
        return tpulang::maxpool(input, ints(kernel), ints(stride), ints(pad), ceil_mode, text(out_name));
      },
      "Max pool over NCHW; kernel [kh, kw] required, pad [top, bottom, left, right].", py::arg("input"),
      py::arg("kernel"), py::arg("stride") = none, py::arg("pad") = none, py::arg("ceil_mode") = false,
      py::arg("out_name") = none);
  m.def(
      "avgpool",
      [](const Tensor& input, const py::object& kernel, const py::object& stride, const py::object& pad, bool ceil_mode,
         bool count_include_pad, const py::object& out_name) {
        return tpulang::avgpool(input, ints(kernel), ints(stride), ints(pad), ceil_mode, count_include_pad,
                                text(out_name));
      },
      "Average pool over NCHW; kernel [kh, kw] required, pad [top, bottom, left, right].", py::arg("input"),
      py::arg("kernel"), py::arg("stride") = none, py::arg("pad") = none, py::arg("ceil_mode") = false,
      py::arg("count_include_pad") = false, py::arg("out_name") = none);
  m.def(
      "concat",
      [](const std::vector<Tensor>& inputs, int64_t axis, const py::object& out_name) {
        return tpulang::concat(inputs, axis, text(out_name));
      },
      "Concatenates the tensors along axis.", py::arg("inputs"), py::arg("axis") = 0, py::arg("out_name") = none);
  m.def(
      "reshape",
      [](const Tensor& t, const py::object& new_shape, const py::object& out_name) {
        return tpulang::reshape(t, ints(new_shape), text(out_name));
      },
      "new_shape may hold one -1 (inferred) and 0s (copy the input dim).", py::arg("tensor"), py::arg("new_shape"),
      py::arg("out_name") = none);
  m.def(
      "permute",
      [](const Tensor& t, const py::object& order, const py::object& out_name) {
        return tpulang::permute(t, ints(order), text(out_name));
      },
      "Transposes the dims into order.", py::arg("input"), py::arg("order"), py::arg("out_name") = none);
  m.def(
      "squeeze",
      [](const Tensor& t, const py::object& axis, const py::object& out_name) {
        return tpulang::squeeze(t, ints(axis), text(out_name));
      },
      "Removes the given size-1 axes.", py::arg("tensor_i"), py::arg("axis"), py::arg("out_name") = none);
  m.def(
      "unsqueeze",
      [](const Tensor& t, const py::object& axis, const py::object& out_name) {
        return tpulang::unsqueeze(t, ints(axis), text(out_name));
      },
      "Inserts size-1 axes.", py::arg("tensor_i"), py::arg("axis"), py::arg("out_name") = none);
  m.def(
      "slice",
      [](const Tensor& input, const py::object& starts, const py::object& ends, const py::object& steps,
         const py::object& axes, const py::object& out_name) {
        return tpulang::slice(input, ints(starts), ints(ends), ints(steps), ints(axes), text(out_name));
      },
      "ends exclusive and clamped, steps positive; axes default to the leading dims.", py::arg("input"),
      py::arg("starts"), py::arg("ends"), py::arg("steps") = none, py::arg("axes") = none, py::arg("out_name") = none);
}

void bind_quantization(py::module_& m) {
  const auto none = py::none();
  m.def(
      "requant_fp_to_int",
      [](const Tensor& t, const py::object& scale, const py::object& offset, int64_t requant_mode,
         const std::string& out_dtype, const py::object& out_name, const std::string& round_mode) {
        return tpulang::requant_fp_to_int(t, doubles(scale), ints(offset), requant_mode, out_dtype, text(out_name),
                                          round_mode);
      },
      "Quantizes a float tensor (scale, offset: one value or one per channel).", py::arg("tensor_i"), py::arg("scale"),
      py::arg("offset"), py::arg("requant_mode"), py::arg("out_dtype"), py::arg("out_name") = none,
      py::arg("round_mode") = "half_away_from_zero");
  m.def(
      "dequant_int_to_fp",
      [](const Tensor& t, const py::object& scale, const py::object& offset, const std::string& out_dtype,
         const py::object& out_name, const std::string& round_mode) {
        return tpulang::dequant_int_to_fp(t, doubles(scale), ints(offset), out_dtype, text(out_name), round_mode);
      },
      "Dequantizes an integer tensor to float.", py::arg("tensor_i"), py::arg("scale"), py::arg("offset"),
      py::arg("out_dtype") = "float32", py::arg("out_name") = none, py::arg("round_mode") = "half_away_from_zero");
  m.def(
      "requant_int",
      [](const Tensor& t, const py::object& mul, const py::object& shift, const py::object& offset,
         int64_t requant_mode, const std::string& out_dtype, const py::object& out_name,
         const std::string& round_mode) {
        return tpulang::requant_int(t, ints(mul), ints(shift), ints(offset), requant_mode, out_dtype, text(out_name),
                                    round_mode);
      },
      "Requantizes an integer tensor with mul / shift / offset (requant_mode 2: MultiplierShift).", py::arg("tensor_i"),
      py::arg("mul"), py::arg("shift"), py::arg("offset"), py::arg("requant_mode"), py::arg("out_dtype") = "int8",
      py::arg("out_name") = none, py::arg("round_mode") = "half_away_from_zero");
  m.def(
      "dequant_int",
      [](const Tensor& t, const py::object& mul, const py::object& shift, const py::object& offset, int64_t lshift,
         int64_t requant_mode, const std::string& out_dtype, const py::object& out_name,
         const std::string& round_mode) {
        return tpulang::dequant_int(t, ints(mul), ints(shift), ints(offset), lshift, requant_mode, out_dtype,
                                    text(out_name), round_mode);
      },
      "Dequantizes with mul / shift / offset (requant_mode 0 Normal, 1 TFLite).", py::arg("tensor_i"), py::arg("mul"),
      py::arg("shift"), py::arg("offset"), py::arg("lshift"), py::arg("requant_mode"), py::arg("out_dtype") = "int8",
      py::arg("out_name") = none, py::arg("round_mode") = "half_up");
}

void bind_graph(py::module_& m, const ModuleWrapper& wrap) {
  m.def("init", &tpulang::init, "Creates the current graph for a device: cpu, bm1684x, bm1688, cv183x.",
        py::arg("device") = "cpu");
  m.def("deinit", &tpulang::deinit, "Releases the current graph; its tensors can no longer be used.");
  m.def(
      "compile",
      [](const std::string& name, const std::vector<py::object>& inputs, const std::vector<py::object>& outputs,
         const std::string& dir) {
        tpulang::CompiledFiles files = tpulang::compile(name, tensors(inputs), tensors(outputs), dir);
        return py::make_tuple(files.mlir_path, files.weight_path);
      },
      "Writes DIR/NAME_origin.mlir and DIR/NAME_TOP_F32_all_weight.npz; returns their paths.", py::arg("name"),
      py::arg("inputs"), py::arg("outputs"), py::arg("dir") = ".");
  m.def(
      "emit_top",
      [](const std::string& name, const std::vector<py::object>& inputs, const std::vector<py::object>& outputs) {
        return tpulang::emit_top(tpulang::current_graph(), name, tensors(inputs), tensors(outputs)).mlir;
      },
      "The Top dialect text compile() writes.", py::arg("name"), py::arg("inputs"), py::arg("outputs"));
  m.def(
      "to_kiln",
      [wrap](const std::vector<py::object>& inputs, const std::vector<py::object>& outputs) {
        std::vector<Tensor> outs = tensors(outputs);
        tpulang::KilnProgram program = tpulang::to_kiln(tpulang::current_graph(), tensors(inputs), outs);
        std::vector<std::string> output_names;
        for (const Tensor& t : outs) output_names.push_back(t.name());
        std::vector<std::pair<std::string, py::bytes>> params;
        for (const auto& [name, array] : program.params) params.emplace_back(name, py::bytes(serialize_npy(array)));
        return py::make_tuple(wrap(program.module, output_names), params);
      },
      "The current graph as (kiln module object, [(weight name, npy bytes)]).", py::arg("inputs"), py::arg("outputs"));
}

}  // namespace

void bind_tpulang(py::module_& parent, const ModuleWrapper& wrap) {
  py::module_ m = parent.def_submodule("tpulang", "TpuLang's builder; use kiln.tpulang.");
  bind_tensor(m);
  bind_convolutions(m);
  bind_elementwise(m);
  bind_pools_and_shapes(m);
  bind_quantization(m);
  bind_graph(m, wrap);
}

}  // namespace kiln::python
