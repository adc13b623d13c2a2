#!/usr/bin/python3
"""Builds quantized test models with python3-onnx's helpers, for tests/cli/qnn_legalize.sh:

- qdq: the QDQ form (QuantizeLinear / DequantizeLinear around float Conv and MatMul, with
  per-channel int8 weights), as ONNX Runtime's static quantization writes it;
- qoperator: the QOperator form (QuantizeLinear, QLinearConv with a bias and per-channel
  weights, QLinearMatMul, DequantizeLinear);
- integer: ConvInteger and MatMulInteger (int32 outputs, compared exactly).

usage: qnn_models.py OUT_DIR
Writes OUT_DIR/<name>/ as regression_models.py does (model.onnx, inputs/*.npy, tolerance).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from regression_models import save  # noqa: E402

rng = np.random.default_rng(11)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def model_of(nodes, inputs, outputs, initializers, opset=13):
    graph = helper.make_graph(nodes, "qnn", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


# Seven-bit weights, as quantizers write them with reduce_range: ONNX Runtime's AVX2 kernels for
# uint8 x int8 (hosts without VNNI) add pairs of products in saturating int16, which full-range
# weights overflow (its outputs then differ from the exact ones by up to a third of the scale).
def weights(shape):
    return rng.integers(-64, 64, size=shape).astype(np.int8)


def qdq():
    x_scale, y_scale = np.float32(0.02), np.float32(0.05)
    w = weights((8, 3, 3, 3))
    w_scale = rng.uniform(0.002, 0.01, size=8).astype(np.float32)
    m = weights((8 * 6 * 6, 10))
    m_scale = np.float32(0.003)
    init = [
        const("x_scale", x_scale), const("x_zero", np.uint8(128)), const("w", w), const("w_scale", w_scale),
        const("w_zero", np.zeros(8, np.int8)), const("y_scale", y_scale), const("y_zero", np.uint8(100)),
        const("m", m), const("m_scale", m_scale), const("m_zero", np.int8(0)),
        const("flat", np.array([1, -1], np.int64)), const("z_scale", np.float32(0.1)),
        const("z_zero", np.uint8(120)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wf"], axis=0),
        helper.make_node("Conv", ["xf", "wf"], ["conv"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("QuantizeLinear", ["relu", "y_scale", "y_zero"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["yf"]),
        helper.make_node("Reshape", ["yf", "flat"], ["yflat"]),
        helper.make_node("DequantizeLinear", ["m", "m_scale", "m_zero"], ["mf"]),
        helper.make_node("MatMul", ["yflat", "mf"], ["mm"]),
        helper.make_node("QuantizeLinear", ["mm", "z_scale", "z_zero"], ["zq"]),
        helper.make_node("DequantizeLinear", ["zq", "z_scale", "z_zero"], ["output"]),
    ]
    model = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                     [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], init)
    x = rng.uniform(-2.5, 2.5, size=(1, 3, 12, 12)).astype(np.float32)
    # Rounding of a float product may differ by one step of the output's scale.
    return model, {"x": x}, {"tolerance": (0, 0.1001)}


def qoperator():
    w = weights((16, 4, 3, 3))
    w_scale = rng.uniform(0.002, 0.01, size=16).astype(np.float32)
    bias = rng.integers(-3000, 3000, size=16).astype(np.int32)
    m = weights((16 * 5 * 5, 12))
    init = [
        const("x_scale", np.float32(0.03)), const("x_zero", np.uint8(120)), const("w", w),
        const("w_scale", w_scale), const("w_zero", np.zeros(16, np.int8)), const("y_scale", np.float32(0.2)),
        const("y_zero", np.uint8(90)), const("bias", bias), const("flat", np.array([1, -1], np.int64)),
        const("m", m), const("m_scale", np.float32(0.004)), const("m_zero", np.int8(3)),
        const("z_scale", np.float32(0.5)), const("z_zero", np.uint8(128)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"]),
        helper.make_node("QLinearConv",
                         ["xq", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "bias"], ["yq"],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Reshape", ["yq", "flat"], ["yflat"]),
        helper.make_node("QLinearMatMul", ["yflat", "y_scale", "y_zero", "m", "m_scale", "m_zero", "z_scale", "z_zero"],
                         ["zq"]),
        helper.make_node("DequantizeLinear", ["zq", "z_scale", "z_zero"], ["output"]),
    ]
    model = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 10, 10])],
                     [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 12])], init)
    x = rng.uniform(-3.5, 3.5, size=(1, 4, 10, 10)).astype(np.float32)
    return model, {"x": x}, {"tolerance": (0, 0.5001)}


def integer():
    w = rng.integers(0, 256, size=(6, 3, 3, 3)).astype(np.uint8)
    m = weights((3 * 7 * 7, 5))
    init = [const("x_zero", np.uint8(131)), const("w", w), const("w_zero", np.uint8(127)),
            const("m", m), const("m_zero", np.int8(-2))]
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "x_zero", "w_zero"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("MatMulInteger", ["a", "m", "x_zero", "m_zero"], ["output_mm"]),
        helper.make_node("Identity", ["conv"], ["output_conv"]),
    ]
    model = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 7, 7]),
                             helper.make_tensor_value_info("a", TensorProto.UINT8, [4, 3 * 7 * 7])],
                     [helper.make_tensor_value_info("output_conv", TensorProto.INT32, [1, 6, 7, 7]),
                      helper.make_tensor_value_info("output_mm", TensorProto.INT32, [4, 5])], init, opset=10)
    x = rng.integers(0, 256, size=(1, 3, 7, 7)).astype(np.uint8)
    a = rng.integers(0, 256, size=(4, 3 * 7 * 7)).astype(np.uint8)
    return model, {"x": x, "a": a}, {"tolerance": (0, 0)}


def main():
    out_dir = sys.argv[1]
    for name, build in (("qdq", qdq), ("qoperator", qoperator), ("integer", integer)):
        save(out_dir, name, *build())


if __name__ == "__main__":
    main()
