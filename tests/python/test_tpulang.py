"""kiln.tpulang: TpuLang's builder from Python, its Top MLIR files, to_kiln, and its errors."""

import numpy as np
import pytest

import kiln
import kiln.tpulang as tpul


@pytest.fixture
def graph():
    tpul.init("cpu")
    yield
    tpul.deinit()


def run(mod, params, inputs):
    lib = kiln.build(mod, target="c", params=params)
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    for name, value in inputs.items():
        module.set_input(name, value)
    module.run()
    return [module.get_output(i).numpy() for i in range(module.get_num_outputs())]


def test_names_mirror_the_cpp_builder():
    for name in ("init", "deinit", "Tensor", "conv", "conv_v2", "deconv", "matmul", "add", "sub", "mul", "div",
                 "relu", "leaky_relu", "prelu", "sigmoid", "tanh", "gelu", "softmax", "clamp", "layer_norm",
                 "maxpool", "avgpool", "concat", "reshape", "permute", "squeeze", "unsqueeze", "slice",
                 "requant_fp_to_int", "dequant_int_to_fp", "requant_int", "dequant_int", "compile", "to_kiln"):
        assert callable(getattr(tpul, name)), name


def test_tensor_properties(graph):
    w = np.ones((2, 3), dtype="float32")
    t = tpul.Tensor(shape=[2, 3], name="w", data=w, is_const=True)
    assert (t.name, t.shape, t.dtype, t.is_const, t.is_weight) == ("w", [2, 3], "float32", True, True)
    q = tpul.Tensor([1, 4], dtype="int8", scale=0.5, zero_point=3)
    assert q.scale == [0.5] and q.zero_point == [3] and q.name  # a generated name
    assert "w" in repr(t)


def test_conv_v2_compiles_to_top_mlir_and_npz(graph, tmp_path):
    x = tpul.Tensor(shape=[1, 3, 8, 8], name="x")
    weight_data = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype("float32")
    w = tpul.Tensor(shape=[4, 3, 3, 3], name="w", data=weight_data)
    y = tpul.conv_v2(x, w, stride=[2, 2], pad=[1, 1, 1, 1], out_name="y")
    assert y.shape == [1, 4, 4, 4]
    mlir_path, npz_path = tpul.compile("Conv", [x], [y], str(tmp_path))
    assert mlir_path.endswith("Conv_origin.mlir") and npz_path.endswith("Conv_TOP_F32_all_weight.npz")
    text = open(mlir_path).read()
    assert '"top.Conv"' in text and "strides = [2, 2]" in text
    assert text == tpul.emit_top("Conv", [x], [y])
    np.testing.assert_array_equal(np.load(npz_path)["w"], weight_data)


def test_to_kiln_builds_and_runs(graph):
    x = tpul.Tensor(shape=[2, 4], name="x")
    w = tpul.Tensor(shape=[4, 3], name="w", data=np.arange(12, dtype="float32").reshape(4, 3))
    b = tpul.Tensor(shape=[3], name="b", data=np.array([1, -100, 0], dtype="float32"))
    y = tpul.relu(tpul.matmul(x, w, b), out_name="y")
    mod, params = tpul.to_kiln([x], [y])
    assert mod.input_names[0] == "x" and set(params) == {"w", "b"}
    assert mod.output_names == ["y"]
    data = np.array([[1, 2, 3, 4], [0, 1, 0, -1]], dtype="float32")
    out, = run(mod, params, {"x": data})
    np.testing.assert_allclose(out, np.maximum(data @ np.arange(12).reshape(4, 3) + [1, -100, 0], 0))


def test_quantize_round_trip_runs(graph):
    x = tpul.Tensor(shape=[1, 4], name="x")
    q = tpul.requant_fp_to_int(x, 0.5, 0, 0, "int8", out_name="q")
    assert q.dtype == "int8" and q.scale == [0.5]
    y = tpul.dequant_int_to_fp(q, 0.5, 0, out_name="y")
    mod, params = tpul.to_kiln([x], [y])
    out, = run(mod, params, {"x": np.array([[0.2, 1.0, -1.3, 100.0]], dtype="float32")})
    np.testing.assert_allclose(out, [[0.0, 1.0, -1.5, 63.5]])


def test_bad_pad_length(graph):
    x = tpul.Tensor(shape=[1, 3, 8, 8])
    w = tpul.Tensor(shape=[4, 3, 3, 3], data=np.zeros((4, 3, 3, 3), "float32"))
    with pytest.raises(kiln.KilnError, match=r"tpulang\.conv_v2.*'pad'.*expected 4 values"):
        tpul.conv_v2(x, w, pad=[1, 1])


def test_tensor_of_another_graph():
    tpul.init("cpu")
    old = tpul.Tensor(shape=[1, 4], name="old")
    tpul.deinit()
    tpul.init("cpu")
    try:
        new = tpul.Tensor(shape=[1, 4], name="new")
        with pytest.raises(kiln.KilnError, match=r"tpulang\.add.*'tensor_i0'.*'old'.*released"):
            tpul.add(old, new)
    finally:
        tpul.deinit()


def test_no_current_graph():
    with pytest.raises(kiln.KilnError, match="init"):
        tpul.Tensor(shape=[1])


def test_argument_errors(graph):
    with pytest.raises(kiln.KilnError, match="unknown dtype"):
        tpul.Tensor(shape=[1], dtype="float31")
    with pytest.raises(kiln.KilnError, match="does not match its shape"):
        tpul.Tensor(shape=[2, 2], data=np.zeros(3, "float32"))
    x = tpul.Tensor(shape=[1, 4], name="x")
    with pytest.raises(kiln.KilnError, match="already used"):
        tpul.Tensor(shape=[1, 4], name="x")
    with pytest.raises(TypeError):
        tpul.relu(np.zeros(4))
    with pytest.raises(kiln.KilnError, match="unknown device"):
        tpul.init("gpu")


def test_top_mlir_from_python_compiles_with_the_cli(graph, tmp_path, kiln_binary):
    """Conv_origin.mlir written here, compiled by `kiln compile`, runs from Python like to_kiln's build."""
    import subprocess

    rng = np.random.default_rng(1)
    x = tpul.Tensor(shape=[1, 2, 6, 6], name="x")
    w = tpul.Tensor(shape=[3, 2, 3, 3], name="w", data=rng.standard_normal((3, 2, 3, 3)).astype("float32"))
    y = tpul.relu(tpul.conv(x, w, pad=[1, 1, 1, 1]), out_name="y")
    mlir_path, _ = tpul.compile("Conv", [x], [y], str(tmp_path))
    artifact = tmp_path / "conv.kiln"
    result = subprocess.run([kiln_binary, "compile", mlir_path, "-o", str(artifact)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    data = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    module = kiln.graph_executor.GraphModule(kiln.runtime.load_module(str(artifact))["default"](kiln.cpu(0)))
    module.set_input(0, data)
    module.run()
    mod, params = tpul.to_kiln([x], [y])
    expected, = run(mod, params, {"x": data})
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-6)
