"""Cases for the existing ONNX operators that changed in opsets 18 to 21: reductions with axes as
an input and noop_with_empty_axes, Split's num_outputs, Pad's axes input and wrap mode, Resize's
antialias / keep_aspect_ratio_policy / axes / half_pixel_symmetric, ScatterElements and ScatterND
max / min, AveragePool dilations, and Cast's saturate. Each model is built at the opset that
introduced the behaviour; data are run-time inputs, axes / pads / sizes initializers.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(18)


def model(nodes, inputs, outputs, inits=(), opset=18):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9 if opset >= 19 else 8)


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def result(name, rank, elem=TensorProto.FLOAT):
    """An output of the given rank with symbolic extents (the checker wants a shape)."""
    return helper.make_tensor_value_info(name, elem, ["d%d" % i for i in range(rank)])


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def data(shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---- reductions (opset 18: axes input, noop_with_empty_axes) ----

REDUCE_OPS = ["ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceSum", "ReduceSumSquare", "ReduceL1",
              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"]


def reduce_case(op, axes, keepdims, noop=0, positive=False):
    def build():
        x = np.abs(data((2, 3, 4))) + 0.5 if positive else data((2, 3, 4))
        inputs, inits = ["x"], []
        if axes is not None:
            inputs.append("axes")
            inits.append(ints("axes", axes))
        node = helper.make_node(op, inputs, ["y"], keepdims=keepdims, noop_with_empty_axes=noop)
        reduces_nothing = not axes and noop
        rank = 3 if keepdims or reduces_nothing else (3 - len(axes) if axes else 0)
        return model([node], [tensor("x", [2, 3, 4])], [result("y", rank)], inits), {"x": x}
    return build


def reduce_cases():
    cases = {}
    for op in REDUCE_OPS:
        positive = op in ("ReduceLogSum", "ReduceProd")
        key = op[len("Reduce"):].lower()
        cases["reduce_%s_axes_input" % key] = reduce_case(op, [0, -1], 0, positive=positive)
        cases["reduce_%s_keepdims" % key] = reduce_case(op, [1], 1, positive=positive)
        cases["reduce_%s_no_axes" % key] = reduce_case(op, None, 0, positive=positive)
        cases["reduce_%s_noop_empty_axes" % key] = reduce_case(op, [], 1, noop=1, positive=positive)
    cases["reduce_sum_no_axes_noop"] = reduce_case("ReduceSum", None, 1, noop=1)
    return cases


def reduce_axes_from_shape():
    """The axes computed from Shape arithmetic fold at import time."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["n"]),
             helper.make_node("Sub", ["n", "one"], ["last"]), helper.make_node("Unsqueeze", ["last", "zero"], ["axes"]),
             helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)]
    inits = [ints("one", 1), ints("zero", [0])]
    return model(nodes, [tensor("x", [2, 3, 4])], [result("y", 2)], inits), {"x": data((2, 3, 4))}


def reduce_max_bool():
    """ReduceMax/Min accept bool from opset 20."""
    nodes = [helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0),
             helper.make_node("ReduceMin", ["x", "axes"], ["z"], keepdims=0)]
    x = rng.standard_normal((3, 4)) > 0
    return (model(nodes, [tensor("x", [3, 4], TensorProto.BOOL)],
                  [result("y", 1, TensorProto.BOOL), result("z", 1, TensorProto.BOOL)], [ints("axes", [1])],
                  opset=20), {"x": x})


# ---- Split (opset 18: num_outputs) ----

def split_case(extent, parts, axis=1):
    def build():
        outs = ["y%d" % i for i in range(parts)]
        node = helper.make_node("Split", ["x"], outs, axis=axis, num_outputs=parts)
        shape = [2, extent, 3]
        return model([node], [tensor("x", shape)], [result(o, 3) for o in outs]), {"x": data(shape)}
    return build


def split_sizes_input():
    node = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=-1)
    return (model([node], [tensor("x", [2, 7])], [result(o, 2) for o in "abc"], [ints("split", [1, 4, 2])]),
            {"x": data((2, 7))})


# ---- Pad (opset 18: axes input; 19: wrap) ----

def pad_case(mode, pads, axes=None, opset=18, value=None):
    def build():
        inputs, inits = ["x", "pads"], [ints("pads", pads)]
        if value is not None or axes is not None:
            inputs.append("value" if value is not None else "")
            if value is not None:
                inits.append(floats("value", value))
        if axes is not None:
            inputs.append("axes")
            inits.append(ints("axes", axes))
        node = helper.make_node("Pad", inputs, ["y"], mode=mode)
        return model([node], [tensor("x", [2, 3, 4])], [result("y", 3)], inits, opset), {"x": data((2, 3, 4))}
    return build


# ---- Resize (opset 18: antialias, keep_aspect_ratio_policy, axes; 19: half_pixel_symmetric) ----

def resize_case(shape, opset=18, sizes=None, scales=None, **attrs):
    def build():
        inputs, inits = ["x", "", ""], []
        if scales is not None:
            inputs[2] = "scales"
            inits.append(floats("scales", scales))
        if sizes is not None:
            inputs.append("sizes")
            inits.append(ints("sizes", sizes))
        node = helper.make_node("Resize", inputs, ["y"], **attrs)
        return model([node], [tensor("x", shape)], [result("y", len(shape))], inits, opset), {"x": data(shape)}
    return build


def resize_cases():
    s = [1, 2, 12, 10]
    return {
        "resize_antialias_linear_down": resize_case(s, sizes=[1, 2, 5, 4], mode="linear", antialias=1),
        "resize_antialias_linear_scales": resize_case(s, scales=[1, 1, 0.4, 0.6], mode="linear", antialias=1),
        "resize_antialias_cubic_down": resize_case(s, sizes=[1, 2, 4, 3], mode="cubic", antialias=1),
        "resize_antialias_cubic_exclude": resize_case(s, sizes=[1, 2, 5, 3], mode="cubic", antialias=1,
                                                      exclude_outside=1),
        "resize_antialias_linear_up_down": resize_case(s, sizes=[1, 2, 20, 4], mode="linear", antialias=1),
        "resize_antialias_align_corners": resize_case(s, sizes=[1, 2, 5, 4], mode="linear", antialias=1,
                                                      coordinate_transformation_mode="align_corners"),
        "resize_axes_sizes": resize_case(s, sizes=[7, 15], mode="linear", axes=[2, 3]),
        "resize_axes_negative_scales": resize_case(s, scales=[0.5, 2.0], mode="nearest", axes=[-2, -1]),
        "resize_not_larger": resize_case(s, sizes=[8, 8], mode="linear", axes=[2, 3],
                                         keep_aspect_ratio_policy="not_larger"),
        "resize_not_smaller": resize_case(s, sizes=[8, 8], mode="cubic", axes=[2, 3],
                                          keep_aspect_ratio_policy="not_smaller"),
        "resize_not_larger_nearest": resize_case(s, sizes=[9, 5], mode="nearest", axes=[2, 3],
                                                 keep_aspect_ratio_policy="not_larger"),
        "resize_half_pixel_symmetric_linear": resize_case(s, opset=19, scales=[1, 1, 0.7, 1.7], mode="linear",
                                                          coordinate_transformation_mode="half_pixel_symmetric"),
        "resize_half_pixel_symmetric_sizes": resize_case(s, opset=19, sizes=[1, 2, 5, 23], mode="cubic",
                                                         coordinate_transformation_mode="half_pixel_symmetric"),
    }


# ---- ScatterElements / ScatterND (opset 18: max, min) ----

def scatter_elements(reduction):
    def build():
        node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=reduction)
        indices = np.array([[0, 2, 0, 1], [3, 3, 1, -1], [2, 0, 2, 2]], dtype=np.int64)
        graph_inputs = [tensor("x", [3, 4]), tensor("i", [3, 4], TensorProto.INT64), tensor("u", [3, 4])]
        return model([node], graph_inputs, [result("y", 2)]), {"x": data((3, 4)), "i": indices,
                                                                   "u": data((3, 4))}
    return build


def scatter_nd(reduction):
    def build():
        node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
        indices = np.array([[[0, 1], [2, 0]], [[0, 1], [1, 2]]], dtype=np.int64)
        graph_inputs = [tensor("x", [3, 3, 4]), tensor("i", [2, 2, 2], TensorProto.INT64), tensor("u", [2, 2, 4])]
        return model([node], graph_inputs, [result("y", 3)]), {"x": data((3, 3, 4)), "i": indices,
                                                                   "u": data((2, 2, 4))}
    return build


def scatter_nd_int_max():
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="max")
    x = rng.integers(-50, 50, (4, 3)).astype(np.int32)
    graph_inputs = [tensor("x", [4, 3], TensorProto.INT32), tensor("i", [3, 1], TensorProto.INT64),
                    tensor("u", [3, 3], TensorProto.INT32)]
    return (model([node], graph_inputs, [result("y", 2, TensorProto.INT32)]),
            {"x": x, "i": np.array([[1], [3], [1]], dtype=np.int64), "u": rng.integers(-50, 50, (3, 3)).astype(np.int32)})


# ---- AveragePool (opset 19: dilations) ----

def avg_pool(shape, **attrs):
    def build():
        node = helper.make_node("AveragePool", ["x"], ["y"], **attrs)
        return model([node], [tensor("x", shape)], [result("y", len(shape))], opset=19), {"x": data(shape)}
    return build


# ---- Cast / CastLike (opset 19: saturate) ----
# saturate only changes casts to float8 types, which kiln lacks; elsewhere it has no effect. ONNX
# Runtime rejects saturate=0 for any other target, so the cases give the default, 1, explicitly.

def cast_saturate(saturate=1, opset=19):
    def build():
        nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32, saturate=saturate),
                 helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16, saturate=saturate),
                 helper.make_node("CastLike", ["x", "like"], ["z"], saturate=saturate)]
        x = (data((3, 4)) * 100).astype(np.float32)
        return (model(nodes, [tensor("x", [3, 4]), tensor("like", [1], TensorProto.DOUBLE)],
                      [result("y", 2, TensorProto.INT32), result("h", 2, TensorProto.FLOAT16),
                       result("z", 2, TensorProto.DOUBLE)], opset=opset),
                {"x": x, "like": np.zeros(1, np.float64)})
    return build


CASES = {
    **reduce_cases(),
    "reduce_axes_from_shape": reduce_axes_from_shape,
    "reduce_max_min_bool": reduce_max_bool,
    "split_num_outputs_even": split_case(6, 3),
    "split_num_outputs_uneven": split_case(7, 3),
    "split_num_outputs_uneven_last_axis": split_case(5, 2, axis=-1),
    "split_sizes_input_18": split_sizes_input,
    "pad_axes_constant": pad_case("constant", [1, 2, 0, 3], axes=[0, 2], value=1.5),
    "pad_axes_negative_edge": pad_case("edge", [2, 1, 1, 0], axes=[-1, 1]),
    "pad_axes_reflect": pad_case("reflect", [1, 2], axes=[-1]),
    "pad_wrap": pad_case("wrap", [0, 1, 2, 1, 2, 3], opset=19),
    "pad_wrap_axes": pad_case("wrap", [2, 3], axes=[1], opset=19),
    # Beyond one period on the end side (ONNX Runtime leaves begin pads wider than the axis unset).
    "pad_wrap_wide": pad_case("wrap", [0, 3, 2, 0, 7, 9], opset=19),
    **resize_cases(),
    "scatter_elements_max": scatter_elements("max"),
    "scatter_elements_min": scatter_elements("min"),
    "scatter_nd_max": scatter_nd("max"),
    "scatter_nd_min": scatter_nd("min"),
    "scatter_nd_int_max": scatter_nd_int_max,
    "avg_pool_dilations_2d": avg_pool([1, 2, 9, 10], kernel_shape=[3, 2], dilations=[2, 3]),
    "avg_pool_dilations_pads": avg_pool([1, 2, 8, 8], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 2, 1, 0],
                                        strides=[2, 1]),
    "avg_pool_dilations_count_pad": avg_pool([1, 2, 8, 8], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 2, 1, 0],
                                             count_include_pad=1),
    "avg_pool_dilations_ceil": avg_pool([1, 1, 9, 9], kernel_shape=[2, 2], dilations=[2, 2], strides=[2, 2],
                                        ceil_mode=1),
    "avg_pool_dilations_1d": avg_pool([2, 3, 11], kernel_shape=[3], dilations=[3]),
    "avg_pool_dilations_3d": avg_pool([1, 1, 6, 7, 8], kernel_shape=[2, 2, 2], dilations=[2, 1, 3]),
    "cast_saturate_19": cast_saturate(),
    "cast_saturate_21": cast_saturate(opset=21),
}
