"""Every user error is a kiln.KilnError (a RuntimeError) with kiln's message; nothing aborts."""

import numpy as np
import pytest

import kiln


@pytest.fixture(scope="module")
def cnn_module(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    lib = kiln.build(mod, params=params)
    return kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))


def test_kiln_error_is_a_runtime_error():
    assert issubclass(kiln.KilnError, RuntimeError)


@pytest.mark.parametrize("data", [b"", b"not a model", bytes(range(256)) * 4])
def test_bad_model_bytes(data):
    with pytest.raises(kiln.KilnError, match=r"\S"):
        kiln.frontend.from_onnx(data)


def test_missing_model_file(tmp_path):
    with pytest.raises(kiln.KilnError, match="missing.onnx"):
        kiln.frontend.from_onnx(tmp_path / "missing.onnx")


def test_wrong_model_type():
    with pytest.raises(kiln.KilnError, match="ModelProto"):
        kiln.frontend.from_onnx(42)


def test_wrong_input_shape(cnn_module):
    with pytest.raises(kiln.KilnError, match="shape"):
        cnn_module.set_input("input", np.zeros((1, 3, 16, 16), dtype="float32"))


def test_wrong_input_dtype(cnn_module):
    with pytest.raises(kiln.KilnError, match="dtype"):
        cnn_module.set_input("input", np.zeros((1, 3, 32, 32), dtype="float64"))


def test_unsupported_array_dtype(cnn_module):
    with pytest.raises(kiln.KilnError, match="unsupported array dtype"):
        cnn_module.set_input("input", np.array([object()]))


def test_unknown_input_name_and_index(cnn_module):
    with pytest.raises(kiln.KilnError, match="nope"):
        cnn_module.set_input("nope", np.zeros((1, 3, 32, 32), dtype="float32"))
    with pytest.raises(kiln.KilnError, match="out of range"):
        cnn_module.set_input(5, np.zeros((1, 3, 32, 32), dtype="float32"))
    with pytest.raises(kiln.KilnError, match="out of range"):
        cnn_module.get_output(3)


def test_unknown_pass_name():
    with pytest.raises(kiln.KilnError, match="FoldConstant"):  # the message lists the known passes
        kiln.transform.get_pass("NoSuchPass")
    with pytest.raises(kiln.KilnError, match="NoSuchPass"):
        kiln.transform.PassContext(required_pass=["NoSuchPass"])
    with pytest.raises(AttributeError):
        kiln.transform.NoSuchPass


def test_bad_pass_option_value():
    with pytest.raises(kiln.KilnError, match="FuseOps.fuse"):
        kiln.transform.PassContext(config={"FuseOps": {"fuse": [1, 2]}})


def test_bad_ir_text():
    with pytest.raises(kiln.KilnError, match="model.relay:1:"):
        kiln.ir.IRModule.from_text("def @main(%x: Tensor[(2), float32]) { add(%x, }", "model.relay")


def test_wrong_dtype_override(cnn_model):
    with pytest.raises(kiln.KilnError, match="float17"):
        kiln.frontend.from_onnx(cnn_model, dtype={"input": "float17"})


def test_unsupported_target(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    with pytest.raises(kiln.KilnError, match="cuda"):
        kiln.build(mod, target="cuda", params=params)


def test_params_of_the_wrong_shape(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    params = {name: np.zeros((1,), dtype="float32") for name in params}
    with pytest.raises(kiln.KilnError):
        kiln.build(mod, params=params)


def test_load_module_of_a_missing_folder(tmp_path):
    with pytest.raises(kiln.KilnError, match="missing.kiln"):
        kiln.runtime.load_module(tmp_path / "missing.kiln")


def test_graph_module_of_something_else():
    with pytest.raises(kiln.KilnError, match="GraphModule"):
        kiln.graph_executor.GraphModule(object())


def test_unknown_default_dtype(cnn_model):
    with pytest.raises(kiln.KilnError, match="float17"):
        kiln.frontend.from_onnx(cnn_model, dtype="float17")


@pytest.mark.parametrize("text", ["\x00 def @main(", "\xff def @main(", "def @main(%x: Tensor[(2), float32]) { \x00 }"])
def test_error_messages_survive_odd_characters(text):
    with pytest.raises(kiln.KilnError, match="unexpected character"):
        kiln.ir.IRModule.from_text(text)


def test_negative_or_non_integer_index(cnn_module):
    x = np.zeros((1, 3, 32, 32), dtype="float32")
    for index in (-1, 1.5):
        with pytest.raises(kiln.KilnError, match="out of range"):
            cnn_module.set_input(index, x)
    with pytest.raises(kiln.KilnError, match="out of range"):
        cnn_module.get_output(-1)


def test_run_before_setting_inputs(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    module = kiln.graph_executor.GraphModule(kiln.build(mod, params=params)["default"](kiln.cpu(0)))
    with pytest.raises(kiln.KilnError, match="was not set"):
        module.run()
