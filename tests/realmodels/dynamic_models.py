#!/usr/bin/python3
"""Models whose inputs have a dimension known only at run time, built with python3-onnx:
dynamic_models.py OUT_DIR writes OUT_DIR/{cnn,encoder}/model.onnx and one input folder per
shape the test runs (OUT_DIR/NAME/in_<shape>/), random weights and inputs, fixed seed.
- cnn: a batch axis 'batch' (Conv, Relu, MaxPool, GlobalAveragePool, then a Reshape whose
  shape is computed from Shape(x) as exporters write flatten, Gemm, Softmax); batches 1, 4, 16.
- encoder: a self-attention block over a 'seq' axis (Gather embedding, MatMuls, head split
  and merge through Shape / Concat / Reshape, Softmax, residual, LayerNormalization);
  sequence lengths 7, 64, 128 at batch 2."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

rng = np.random.default_rng(7)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def weights(name, *shape):
    return const(name, (rng.standard_normal(shape) * 0.2).astype(np.float32))


def shape_prefix(nodes, x, out, length):
    """out = Shape(x)[0:length], as exporters compute the leading dims of a reshape."""
    nodes.append(helper.make_node("Shape", [x], [out + "_all"]))
    nodes.append(helper.make_node("Slice", [out + "_all", "zero1", "len" + str(length)], [out]))


def cnn():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
    ]
    shape_prefix(nodes, "g", "lead", 1)
    nodes += [
        helper.make_node("Concat", ["lead", "minus1"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["g", "flat_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    inits = [weights("w1", 8, 3, 3, 3), weights("b1", 8), weights("w2", 16, 8, 3, 3), weights("b2", 16),
             weights("w3", 10, 16), weights("b3", 10), const("zero1", np.array([0], np.int64)),
             const("len1", np.array([1], np.int64)), const("minus1", np.array([-1], np.int64))]
    graph = helper.make_graph(nodes, "cnn_dynamic_batch",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])], inits)
    inputs = {f"in_{n}": {"x": rng.standard_normal((n, 3, 16, 16)).astype(np.float32)} for n in (1, 4, 16)}
    return graph, 13, inputs


def encoder():
    d, heads = 32, 4
    nodes = [helper.make_node("Gather", ["embedding", "ids"], ["h"], axis=0)]
    for name in ("q", "k", "v"):
        nodes.append(helper.make_node("MatMul", ["h", "w" + name], [name]))
    shape_prefix(nodes, "h", "bs", 2)
    nodes.append(helper.make_node("Concat", ["bs", "head_dims"], ["split_shape"], axis=0))
    for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        nodes.append(helper.make_node("Reshape", [name, "split_shape"], [name + "_split"]))
        nodes.append(helper.make_node("Transpose", [name + "_split"], [name + "_heads"], perm=perm))
    nodes += [
        helper.make_node("MatMul", ["q_heads", "k_heads"], ["scores_raw"]),
        helper.make_node("Div", ["scores_raw", "scale"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", "v_heads"], ["ctx_heads"]),
        helper.make_node("Transpose", ["ctx_heads"], ["ctx_split"], perm=[0, 2, 1, 3]),
        helper.make_node("Concat", ["bs", "model_dim"], ["merge_shape"], axis=0),
        helper.make_node("Reshape", ["ctx_split", "merge_shape"], ["ctx"]),
        helper.make_node("MatMul", ["ctx", "wo"], ["proj"]),
        helper.make_node("Add", ["proj", "h"], ["res"]),
        helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["norm"], axis=-1),
        helper.make_node("MatMul", ["norm", "head"], ["y"]),
    ]
    inits = [weights("embedding", 50, d), weights("wq", d, d), weights("wk", d, d), weights("wv", d, d),
             weights("wo", d, d), weights("head", d, 10), const("gamma", np.ones(d, np.float32)),
             const("beta", np.zeros(d, np.float32)), const("scale", np.array(np.sqrt(d // heads), np.float32)),
             const("zero1", np.array([0], np.int64)), const("len2", np.array([2], np.int64)),
             const("head_dims", np.array([heads, d // heads], np.int64)),
             const("model_dim", np.array([d], np.int64))]
    graph = helper.make_graph(nodes, "encoder_dynamic_seq",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 10])], inits)
    inputs = {f"in_{s}": {"ids": rng.integers(0, 50, (2, s)).astype(np.int64)} for s in (7, 64, 128)}
    return graph, 17, inputs


def main():
    out = sys.argv[1]
    for name, make in (("cnn", cnn), ("encoder", encoder)):
        graph, opset, inputs = make()
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        save(model, os.path.join(folder, "model.onnx"))
        for case, tensors in inputs.items():
            os.makedirs(os.path.join(folder, case), exist_ok=True)
            for tensor, value in tensors.items():
                np.save(os.path.join(folder, case, tensor + ".npy"), value)


if __name__ == "__main__":
    main()
