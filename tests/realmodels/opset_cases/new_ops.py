"""Cases for the ONNX operators added in opsets 18 to 20: Mish, Gelu (none / tanh),
GroupNormalization (opset 18 with per-group scale and bias, opset 21 with per-channel ones and
stash_type), BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot (broadcasting, several integer
dtypes), CenterCropPad (crop, pad, both, axes) and Col2Im (strides, pads, dilations, 1-D and
3-D). Data, scales and biases are run-time inputs; the shapes kiln specialises on
(CenterCropPad's shape, Col2Im's image_shape and block_shape) are initializers.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(1821)


def model(nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ir_version = 10 if opset >= 21 else 9 if opset >= 19 else 8
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def data(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- activations ----

def mish():
    node = helper.make_node("Mish", ["x"], ["y"])
    x = data((2, 3, 4, 5), 4)
    x.flat[:4] = [-30, 30, 0, -0.5]
    return model([node], [tensor("x", [2, 3, 4, 5])], [tensor("y", [2, 3, 4, 5])]), {"x": x}


def gelu(approximate):
    def build():
        attrs = {} if approximate is None else {"approximate": approximate}
        node = helper.make_node("Gelu", ["x"], ["y"], **attrs)
        m = model([node], [tensor("x", [3, 7, 11])], [tensor("y", [3, 7, 11])], opset=20)
        return m, {"x": data((3, 7, 11), 3)}
    return build


# ---- GroupNormalization ----

def group_norm(opset, shape, groups, epsilon=None, stash_type=None):
    def build():
        channels = shape[1]
        params = groups if opset == 18 else channels
        attrs = {"num_groups": groups}
        if epsilon is not None:
            attrs["epsilon"] = epsilon
        if stash_type is not None:
            attrs["stash_type"] = stash_type
        node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], **attrs)
        inputs = [tensor("x", list(shape)), tensor("scale", [params]), tensor("bias", [params])]
        m = model([node], inputs, [tensor("y", list(shape))], opset=opset)
        x = data(shape, 2) + np.arange(channels, dtype=np.float32).reshape((1, channels) + (1,) * (len(shape) - 2))
        return m, {"x": x, "scale": data((params,)), "bias": data((params,))}
    return build


# ---- bitwise ----

INT_TYPES = {
    "int8": (np.int8, TensorProto.INT8),
    "uint8": (np.uint8, TensorProto.UINT8),
    "int16": (np.int16, TensorProto.INT16),
    "uint16": (np.uint16, TensorProto.UINT16),
    "int32": (np.int32, TensorProto.INT32),
    "uint32": (np.uint32, TensorProto.UINT32),
    "int64": (np.int64, TensorProto.INT64),
    "uint64": (np.uint64, TensorProto.UINT64),
}


def integers(shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def bitwise(dtype_name):
    """All four ops in one model: a (3, 4, 5) with b (4, 1) and c (5,) broadcasting."""
    def build():
        dtype, elem = INT_TYPES[dtype_name]
        nodes = [helper.make_node("BitwiseAnd", ["a", "b"], ["and"]),
                 helper.make_node("BitwiseOr", ["b", "a"], ["or"]),
                 helper.make_node("BitwiseXor", ["a", "c"], ["xor"]),
                 helper.make_node("BitwiseNot", ["a"], ["not"])]
        inputs = [tensor("a", [3, 4, 5], elem), tensor("b", [4, 1], elem), tensor("c", [5], elem)]
        outputs = [tensor(name, [3, 4, 5], elem) for name in ("and", "or", "xor", "not")]
        feeds = {"a": integers((3, 4, 5), dtype), "b": integers((4, 1), dtype), "c": integers((5,), dtype)}
        return model(nodes, inputs, outputs), feeds
    return build


# ---- CenterCropPad ----

def center_crop_pad(in_shape, target, axes=None):
    def build():
        attrs = {} if axes is None else {"axes": axes}
        node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **attrs)
        out_shape = list(in_shape)
        for axis, extent in zip(axes or range(len(in_shape)), target):
            out_shape[axis] = extent
        # onnx 1.12's checker wants every graph output to have a shape.
        m = model([node], [tensor("x", list(in_shape))], [tensor("y", out_shape)], [ints("shape", target)])
        return m, {"x": data(in_shape)}
    return build


# ---- Col2Im ----

def col2im(image, block, channels=2, strides=None, pads=None, dilations=None, batch=1):
    def build():
        rank = len(image)
        s = strides or [1] * rank
        p = pads or [0] * (2 * rank)
        d = dilations or [1] * rank
        blocks = [(image[a] + p[a] + p[a + rank] - d[a] * (block[a] - 1) - 1) // s[a] + 1 for a in range(rank)]
        in_shape = [batch, channels * int(np.prod(block)), int(np.prod(blocks))]
        attrs = {}
        if strides:
            attrs["strides"] = strides
        if pads:
            attrs["pads"] = pads
        if dilations:
            attrs["dilations"] = dilations
        node = helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], **attrs)
        m = model([node], [tensor("x", in_shape)], [tensor("y", [batch, channels] + list(image))],
                  [ints("image_shape", image), ints("block_shape", block)])
        return m, {"x": data(in_shape)}
    return build


CASES = {
    "new_mish": mish,
    "new_gelu_default": gelu(None),
    "new_gelu_none": gelu("none"),
    "new_gelu_tanh": gelu("tanh"),
    "new_group_norm18": group_norm(18, (2, 6, 4, 5), 3, epsilon=1e-3),
    "new_group_norm18_one_group": group_norm(18, (1, 4, 7), 1),
    "new_group_norm21": group_norm(21, (2, 6, 4, 5), 3, stash_type=1),
    "new_group_norm21_per_channel_groups": group_norm(21, (3, 8, 9), 8, epsilon=0.1),
    "new_center_crop_pad_crop": center_crop_pad((3, 10, 9), [3, 6, 4]),
    "new_center_crop_pad_pad": center_crop_pad((2, 3, 5), [5, 6, 8]),
    "new_center_crop_pad_axes": center_crop_pad((2, 7, 4, 6), [9, 3], axes=[-1, 1]),
    "new_col2im": col2im([5, 5], [2, 2]),
    "new_col2im_strides_pads_dilations": col2im([9, 8], [3, 2], channels=3, strides=[2, 3], pads=[1, 0, 2, 1],
                                                dilations=[2, 2], batch=2),
    "new_col2im_1d": col2im([10], [3], strides=[2], pads=[1, 1]),
    # No 3-D case with dilations: ONNX Runtime's Col2Im gets those wrong
    # (microsoft/onnxruntime#18156); tests/op/nn_col2im_test.cc checks kiln's against numpy.
    "new_col2im_3d": col2im([4, 5, 3], [2, 3, 2]),
    "new_col2im_3d_strides": col2im([4, 5, 6], [2, 3, 2], strides=[1, 1, 2]),
}
for _name in INT_TYPES:
    CASES["new_bitwise_" + _name] = bitwise(_name)
