"""kiln.frontend.from_onnx and kiln.ir.IRModule."""

import numpy as np
import onnx
import torch
import torchvision

import kiln


def test_from_onnx_accepts_path_bytes_and_model_proto(cnn_model):
    by_path, params = kiln.frontend.from_onnx(str(cnn_model))
    by_bytes, _ = kiln.frontend.from_onnx(cnn_model.read_bytes())
    by_proto, _ = kiln.frontend.from_onnx(onnx.load(str(cnn_model)))
    assert str(by_path) == str(by_bytes) == str(by_proto)
    assert "nn.conv2d" in str(by_path)
    assert by_path.input_names[0] == "input"
    assert by_path.output_names == ["probs"]
    # The initializers are parameters of @main after the real input, their values in params.
    assert set(params) == set(by_path.input_names[1:])
    assert all(isinstance(v.numpy(), np.ndarray) for v in params.values())


def test_freeze_params_leaves_only_the_real_inputs(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model, freeze_params=True)
    assert params == {}
    assert mod.input_names == ["input"]


def test_shape_overrides_the_declared_one(cnn_model):
    mod, _ = kiln.frontend.from_onnx(cnn_model, shape={"input": (2, 3, 32, 32)})
    assert "%input: Tensor[(2, 3, 32, 32), float32]" in str(mod)


def test_ir_text_round_trips(cnn_model):
    mod, _ = kiln.frontend.from_onnx(cnn_model, freeze_params=True)
    text = "def @main(%x: Tensor[(2, 3), float32]) { add(%x, %x) }"
    parsed = kiln.ir.IRModule.from_text(text)
    assert parsed.functions == ["main"]
    assert "add(%x, %x)" in str(parsed)
    assert str(kiln.ir.IRModule.parse(str(parsed))) == str(parsed)


def test_torchvision_export_imports_builds_and_matches_torch(tmp_path):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.rand(1, 3, 32, 32)
    path = tmp_path / "resnet18.onnx"
    torch.onnx.export(model, x, str(path), input_names=["data"], output_names=["logits"], opset_version=13)
    mod, params = kiln.frontend.from_onnx(onnx.load(str(path)), shape={"data": (1, 3, 32, 32)})
    assert "nn.batch_norm" in str(mod) or "nn.conv2d" in str(mod)
    lib = kiln.build(mod, target="c", params=params)
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.set_input("data", x.numpy())
    module.run()
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)
