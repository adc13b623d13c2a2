#!/usr/bin/python3
"""Builds the models of real-world failure classes kiln once had, with one input set each.

usage: regression_models.py OUT_DIR [NAME...]
Writes OUT_DIR/<name>/model.onnx, OUT_DIR/<name>/inputs/<input>.npy and, where the
default tolerance (rtol 1e-3, atol 1e-4) does not fit the model, OUT_DIR/<name>/tolerance
("RTOL ATOL"). Each model reproduces the form a real exporter or tool produces:

- densenet: torchvision's DenseNet-121 (concatenations feeding batch norms).
- concat_batchnorm: a PaddleOCR-style block written with onnx helpers: Concat, then a
  BatchNormalization whose statistics are graph initializers.
- unsorted: a torchvision SqueezeNet export whose nodes are stored in a shuffled order.
- dynamic_quant_seg: torchvision's LR-ASPP MobileNetV3-Large with its convolutions rewritten
  as onnxruntime's quantize_dynamic writes them (DynamicQuantizeLinear, ConvInteger, Cast, Mul,
  Reshape, Add), with int8, uint8 and non-zero weight zero points.
- lstm_in_if: a speech-style model that switches on a scalar sample-rate input, with an
  LSTM inside the taken branch reading the outer graph's tensors.
- fp16_weights: a torchvision MobileNetV3-small export whose float initializers are stored
  as float16 and cast to float32 before use.
"""
import io
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def save(out_dir, name, model, inputs, extras=None):
    """extras: "tolerance" (rtol, atol), "import_flags" (for kiln print and compile) and
    "compile_flags" (kiln compile alone), each written to a file of that name beside the
    model (tests/realmodels/check_against_ort.sh reads them)."""
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for key, value in inputs.items():
        np.save(os.path.join(folder, "inputs", key + ".npy"), value)
    extras = extras or {}
    if "tolerance" in extras:
        with open(os.path.join(folder, "tolerance"), "w") as f:
            f.write("%g %g\n" % extras["tolerance"])
    for flags in ("import_flags", "compile_flags"):
        if flags in extras:
            with open(os.path.join(folder, flags), "w") as f:
                f.write(extras[flags] + "\n")


def torch_export(model, inputs, opset=13):
    import torch

    buf = io.BytesIO()
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    torch.onnx.export(model, args, buf, input_names=list(inputs), output_names=["output"], opset_version=opset,
                      do_constant_folding=True)
    return onnx.load_from_string(buf.getvalue())


def image(shape):
    return rng.standard_normal(shape).astype(np.float32)


def densenet():
    import torch
    import torchvision

    torch.manual_seed(0)
    inputs = {"input": image((1, 3, 64, 64))}
    return torch_export(torchvision.models.densenet121(weights=None).eval(), inputs), inputs


def concat_batchnorm():
    c1, c2 = 8, 12
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 16, 32])
    inits = [
        numpy_helper.from_array(rng.standard_normal((c1, 4, 3, 3)).astype(np.float32) * 0.3, "w1"),
        numpy_helper.from_array(rng.standard_normal((c2, 4, 1, 1)).astype(np.float32) * 0.3, "w2"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, c1 + c2).astype(np.float32), "bn_scale"),
        numpy_helper.from_array(rng.standard_normal(c1 + c2).astype(np.float32), "bn_bias"),
        numpy_helper.from_array(rng.standard_normal(c1 + c2).astype(np.float32) * 0.1, "bn_mean"),
        numpy_helper.from_array(rng.uniform(0.5, 2.0, c1 + c2).astype(np.float32), "bn_var"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], name="conv2d_0", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["b"], name="conv2d_1"),
        helper.make_node("Concat", ["a", "b"], ["cat"], name="concat_0", axis=1),
        helper.make_node("BatchNormalization", ["cat", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"],
                         name="batch_norm_0", epsilon=1e-5),
        helper.make_node("HardSwish", ["bn"], ["y"], name="hard_swish_0"),
    ]
    graph = helper.make_graph(nodes, "paddle_block", [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="PaddlePaddle")
    return model, {"x": image((1, 4, 16, 32))}


def unsorted():
    import torch
    import torchvision

    torch.manual_seed(0)
    inputs = {"input": image((1, 3, 96, 96))}
    model = torch_export(torchvision.models.squeezenet1_1(weights=None).eval(), inputs)
    nodes = list(model.graph.node)
    order = np.random.default_rng(1).permutation(len(nodes))
    del model.graph.node[:]
    model.graph.node.extend(nodes[i] for i in order)
    return model, inputs


# ---- onnxruntime quantize_dynamic's form ----


def quantize_weight(w, dtype, symmetric):
    """Per-tensor quantization of a float weight as quantize_dynamic does it: symmetric int8
    (range [-127, 127], zero point 0) or asymmetric over [min(w, 0), max(w, 0)] (uint8 or int8,
    non-zero zero point). Returns (quantized, scale, zero point)."""
    info = np.iinfo(dtype)
    if symmetric:
        qmin, qmax = -info.max, info.max
        bound = np.float32(np.abs(w).max())
        low, high = -bound, bound
    else:
        qmin, qmax = info.min, info.max
        low, high = np.float32(min(w.min(), 0.0)), np.float32(max(w.max(), 0.0))
    scale = np.float32((high - low) / np.float32(qmax - qmin))
    zero_point = int(np.rint(qmin - low / scale)) if not symmetric else 0
    q = np.clip(np.rint(w / scale) + zero_point, info.min, info.max).astype(dtype)
    return q, scale, zero_point


class DynamicQuantBuilder:
    """Rewrites every Conv of a float model as quantize_dynamic does: the activation quantized
    per run by one DynamicQuantizeLinear shared by all convolutions reading it, the weight
    quantized per tensor, ConvInteger with both zero points and the conv's attributes, Cast to
    float, Mul by x_scale * w_scale, and the bias added through Reshape(bias, [1, -1, 1, 1]).

    `weight_formats` maps a conv's index (model order) to (dtype, symmetric, zero-point shape);
    every other conv gets quantize_dynamic's default, symmetric int8 with a scalar zero point."""

    def __init__(self, model, weight_formats):
        self.model, self.formats = model, weight_formats
        self.inits = {t.name: t for t in model.graph.initializer}
        self.quantized = {}  # activation name -> (quantized, scale, zero point)
        self.new_inits = []

    def init(self, name, array):
        self.new_inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def activation(self, x, nodes):
        if x not in self.quantized:
            names = (f"{x}_quantized", f"{x}_scale", f"{x}_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(names), name=f"{x}_QuantizeLinear"))
            self.quantized[x] = names
        return self.quantized[x]

    def weight(self, index, name):
        dtype, symmetric, zp_shape = self.formats.get(index, (np.int8, True, ()))
        q, scale, zero_point = quantize_weight(numpy_helper.to_array(self.inits[name]), dtype, symmetric)
        return (self.init(f"{name}_quantized", q), self.init(f"{name}_scale", np.array(scale, np.float32)),
                self.init(f"{name}_zero_point", np.full(zp_shape, zero_point, dtype)))

    def conv(self, index, node, nodes):
        xq, xs, xz = self.activation(node.input[0], nodes)
        wq, ws, wz = self.weight(index, node.input[1])
        out = node.output[0]
        acc, accf, scale = f"{out}_output_quantized", f"{out}_output_quantized_cast", f"{out}_scales_mul"
        product = out if len(node.input) < 3 else f"{out}_scaled"
        nodes += [
            helper.make_node("ConvInteger", [xq, wq, xz, wz], [acc], name=f"{node.name}_quant", **attributes(node)),
            helper.make_node("Cast", [acc], [accf], name=f"{out}_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [xs, ws], [scale], name=f"{out}_scales_mul"),
            helper.make_node("Mul", [accf, scale], [product], name=f"{out}_output_scale_mul"),
        ]
        if len(node.input) < 3:
            return
        shape = self.init(f"{out}_bias_shape", np.array([1, -1, 1, 1], np.int64))
        nodes += [
            helper.make_node("Reshape", [node.input[2], shape], [f"{out}_bias_reshaped"], name=f"{out}_bias_reshape"),
            helper.make_node("Add", [product, f"{out}_bias_reshaped"], [out], name=f"{out}_bias_add"),
        ]

    def run(self):
        graph, nodes, index, used = self.model.graph, [], 0, set()
        for node in graph.node:
            if node.op_type != "Conv":
                nodes.append(node)
                continue
            self.conv(index, node, nodes)
            used.add(node.input[1])
            index += 1
        kept = [t for t in graph.initializer if t.name not in used]
        del graph.node[:]
        graph.node.extend(nodes)
        del graph.initializer[:]
        graph.initializer.extend(kept + self.new_inits)
        return self.model


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def dynamic_quant_seg():
    import torch
    import torchvision

    torch.manual_seed(0)
    inputs = {"input": image((1, 3, 160, 160))}
    net = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    model = torch_export(net, inputs)
    # Asymmetric weights with non-zero zero points: the stem (uint8), a 1x1 (uint8, 1-D zero
    # point), a 1x1 expansion (int8) and a strided depthwise 5x5 (int8, 1-D zero point).
    formats = {0: (np.uint8, False, ()), 2: (np.uint8, False, (1,)), 3: (np.int8, False, ()),
               10: (np.int8, False, (1,))}
    model = DynamicQuantBuilder(model, formats).run()
    model.producer_name = "onnx.quantize"
    # Every quantized tensor (DynamicQuantizeLinear's outputs, ConvInteger's accumulators) equals
    # ONNX Runtime's; only float steps (pooling sums, sigmoid) differ in the last bits, and such a
    # difference may move a value across a rounding boundary: one quantization step. A step of
    # every input of the low classifier (scale ~1.1e-4 times its largest row sum of |weights|,
    # ~3.6) moves an output by at most ~4e-4; the output is a convex (bilinear) mix of those.
    # compare.py takes atol relative to the output's largest |value| (~0.2) below 1: 2.5e-3 of
    # it is ~5e-4.
    return model, inputs, {"tolerance": (1e-3, 2.5e-3)}


def lstm_in_if():
    # Silero VAD's form: torch.jit.script over `if sr == 16000: ... else: ...` on a scalar
    # input, each branch a whole network (an STFT as a strided Conv1d, a conv encoder, an
    # LSTMCell decoder over the state input) written for its own chunk size. The audio input
    # has symbolic dimensions, so ONNX Runtime loads the model and runs only the branch
    # taken; for a 16 kHz chunk the 8 kHz branch is ill-typed (its encoder leaves two frames,
    # so its LSTM sees a rank-5 X). kiln's interpreter runs it with a run-time flag; compiled,
    # the flag is bound at build time (--bind sr=16000: the If folds).
    import torch

    class Branch(torch.nn.Module):
        def __init__(self, window, hop, hidden):
            super().__init__()
            self.bins = window // 2 + 1
            self.pad = torch.nn.ReflectionPad1d((0, hop // 2))
            self.stft = torch.nn.Conv1d(1, 2 * self.bins, window, stride=hop, bias=False)
            self.encoder = torch.nn.Sequential(
                torch.nn.Conv1d(self.bins, hidden, 3, padding=1), torch.nn.ReLU(),
                torch.nn.Conv1d(hidden, hidden, 3, stride=2, padding=1), torch.nn.ReLU(),
                torch.nn.Conv1d(hidden, hidden, 3, stride=2, padding=1), torch.nn.ReLU())
            self.rnn = torch.nn.LSTMCell(hidden, hidden)
            self.decoder = torch.nn.Conv1d(hidden, 1, 1)

        def forward(self, x, state):
            spec = self.stft(self.pad(x).unsqueeze(1))
            real, imag = spec[:, :self.bins, :], spec[:, self.bins:, :]
            y = self.encoder(torch.sqrt(real * real + imag * imag)).squeeze(-1)
            h, c = self.rnn(y, (state[0], state[1]))
            out = torch.sigmoid(self.decoder(torch.relu(h.unsqueeze(-1)))).squeeze(1).mean(dim=1, keepdim=True)
            return out, torch.stack([h, c])

    class Vad(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model_16k = Branch(256, 128, 128)
            self.model_8k = Branch(128, 64, 128)

        def forward(self, x, state, sr: int):
            if sr == 16000:
                out, new_state = self.model_16k(x, state)
            else:
                out, new_state = self.model_8k(x, state)
            return out, new_state

    torch.manual_seed(0)
    inputs = {
        "input": rng.standard_normal((1, 576)).astype(np.float32),
        "state": rng.standard_normal((2, 1, 128)).astype(np.float32) * 0.3,
        "sr": np.array(16000, np.int64),
    }
    buf = io.BytesIO()
    args = (torch.from_numpy(inputs["input"]), torch.from_numpy(inputs["state"]), torch.tensor(16000))
    try:
        torch.onnx.export(torch.jit.script(Vad().eval()), args, buf, input_names=list(inputs),
                          output_names=["output", "stateN"], opset_version=16,
                          dynamic_axes={"input": {0: "batch", 1: "samples"}, "state": {1: "batch"}})
    except onnx.checker.ValidationError:
        pass  # torch 1.13 leaves the If's outputs untyped; they are typed below, as Silero's are
    model = onnx.load_from_string(buf.getvalue())
    for output, rank in zip(model.graph.output, (2, 3)):
        output.type.tensor_type.elem_type = TensorProto.FLOAT
        for i in range(rank):
            output.type.tensor_type.shape.dim.add().dim_param = f"{output.name}_{i}"
    onnx.checker.check_model(model)
    # The audio's length is symbolic, and the branches' shape arithmetic needs it at import
    # (run takes it from the inputs given). Compiled code runs dataflow graphs: the flag is
    # fixed at build time, as a deployment for one sample rate would.
    return model, inputs, {"import_flags": "--shape input=1,576 --shape state=2,1,128",
                           "compile_flags": "--bind sr=16000"}


def fp16_weights():
    import torch
    import torchvision

    torch.manual_seed(0)
    inputs = {"input": image((1, 3, 96, 96))}
    model = torch_export(torchvision.models.mobilenet_v3_small(weights=None).eval(), inputs)
    graph = model.graph
    casts, kept = [], []
    for init in graph.initializer:
        if init.data_type != TensorProto.FLOAT:
            kept.append(init)
            continue
        half = numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name + "_fp16")
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name], name=init.name + "_cast", to=TensorProto.FLOAT))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    return model, inputs


MODELS = {
    "densenet": densenet,
    "concat_batchnorm": concat_batchnorm,
    "unsorted": unsorted,
    "dynamic_quant_seg": dynamic_quant_seg,
    "lstm_in_if": lstm_in_if,
    "fp16_weights": fp16_weights,
}


def main():
    out_dir = sys.argv[1]
    for name in sys.argv[2:] or MODELS:
        built = MODELS[name]()
        save(out_dir, name, *built)


if __name__ == "__main__":
    main()
