"""kiln.build, the graph executor, artifacts, and agreement with the `kiln` command line."""

import json
import subprocess

import numpy as np
import pytest

import kiln


def run_cli(kiln_binary, *args):
    result = subprocess.run([kiln_binary, *map(str, args)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def cli_outputs(kiln_binary, model, inputs_dir, out_dir):
    run_cli(kiln_binary, "run", model, "--inputs", inputs_dir, "--outputs", out_dir)
    return np.load(out_dir / "probs.npy")


def run_graph(lib, x):
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.set_input("input", x)
    module.run()
    return module


@pytest.fixture(scope="module")
def cnn_lib(cnn_model):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    return kiln.build(mod, target="c", params=params)


def test_build_and_run_equals_kiln_run(cnn_lib, cnn_model, cnn_input, kiln_binary, tmp_path):
    module = run_graph(cnn_lib, cnn_input)
    assert module.get_num_outputs() == 1
    assert module.get_num_inputs() == 1
    out = module.get_output(0)
    assert out.shape == (1, 10) and out.dtype == "float32"
    expected = cli_outputs(kiln_binary, cnn_model, cnn_model.parent / "inputs", tmp_path)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_set_input_by_index_and_keyword(cnn_lib, cnn_input):
    module = kiln.graph_executor.GraphModule(cnn_lib["default"](kiln.cpu(0)))
    module.set_input(0, cnn_input)
    module.run()
    by_index = module.get_output(0).numpy()
    module.run(input=cnn_input * 0.5)
    assert module.get_input_index("input") == 0
    assert not np.array_equal(module.get_output(0).numpy(), by_index)


def test_graph_json_and_params(cnn_lib):
    graph = json.loads(cnn_lib.get_graph_json())
    assert {"nodes", "arg_nodes", "heads", "attrs"} <= set(graph)
    params = cnn_lib.get_params()
    assert params and all(v.numpy().size > 0 for v in params.values())


def test_exported_library_runs_with_the_command_line(cnn_lib, cnn_model, cnn_input, kiln_binary, tmp_path):
    artifact = tmp_path / "cnn.kiln"
    cnn_lib.export_library(artifact)
    assert (artifact / "graph.json").exists() and (artifact / "lib.so").exists()
    from_cli = cli_outputs(kiln_binary, artifact, cnn_model.parent / "inputs", tmp_path / "out")
    np.testing.assert_array_equal(from_cli, run_graph(cnn_lib, cnn_input).get_output(0).numpy())
    loaded = kiln.runtime.load_module(artifact)
    np.testing.assert_array_equal(run_graph(loaded, cnn_input).get_output(0).numpy(), from_cli)


def test_kiln_compile_artifact_runs_from_python(cnn_model, cnn_input, kiln_binary, tmp_path):
    artifact = tmp_path / "compiled.kiln"
    run_cli(kiln_binary, "compile", cnn_model, "-o", artifact)
    lib = kiln.runtime.load_module(artifact)
    assert lib.input_names == ["input"] and lib.output_names == ["probs"]
    assert json.loads(lib.get_graph_json())["nodes"]
    got = run_graph(lib, cnn_input).get_output(0).numpy()
    np.testing.assert_array_equal(got, cli_outputs(kiln_binary, artifact, cnn_model.parent / "inputs", tmp_path))


def test_opt_level_zero_gives_the_same_values(cnn_model, cnn_input, cnn_lib):
    mod, params = kiln.frontend.from_onnx(cnn_model)
    with kiln.transform.PassContext(opt_level=0):
        unfused = kiln.build(mod, params=params)
    assert unfused.num_kernels > cnn_lib.num_kernels
    np.testing.assert_allclose(run_graph(unfused, cnn_input).get_output(0).numpy(),
                               run_graph(cnn_lib, cnn_input).get_output(0).numpy(), rtol=1e-5, atol=1e-6)


def test_benchmark_returns_timings(cnn_lib, cnn_input):
    result = run_graph(cnn_lib, cnn_input).benchmark(repeat=3, number=2)
    assert len(result.results) == 3
    assert result.min <= result.median <= result.max
    assert "mean (ms)" in repr(result)


def test_a_module_from_ir_text_builds_and_runs():
    mod = kiln.ir.IRModule.from_text("def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(2, 3), float32]) "
                                     "{ %0 = multiply(%x, %w); add(%0, 1f) }")
    w = np.full((2, 3), 2, dtype="float32")
    lib = kiln.build(mod, params={"w": w})
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    x = np.arange(6, dtype="float32").reshape(2, 3)
    module.set_input("x", x)
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), x * w + 1)


def test_threads_build_and_run_at_once(cnn_model, cnn_input, cnn_lib):
    # build() and run() release the GIL; each thread its own executor, all giving one answer.
    import concurrent.futures

    expected = run_graph(cnn_lib, cnn_input).get_output(0).numpy()

    def build_and_run(seed):
        mod, params = kiln.frontend.from_onnx(cnn_model)
        with kiln.transform.PassContext(opt_level=3):
            lib = kiln.build(mod, params=params)
        module = run_graph(lib, cnn_input)
        for _ in range(5):
            module.run()
        return module.get_output(0).numpy()

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for got in pool.map(build_and_run, range(3)):
            np.testing.assert_array_equal(got, expected)
