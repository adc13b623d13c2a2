"""The scripts of examples/python run and check their own results."""

import os
import subprocess
import sys

import pytest

# Each script asserts its result; the last line it prints says what it checked.
EXAMPLES = {
    "from_onnx_build_run.py": "equal to PyTorch's logits",
    "remove_unused_functions.py": "removed @fn2",
    "simplify_inference.py": "outputs equal before and after",
    "inline.py": "@g1 inlined, @g2 kept",
    "fuse_ops.py": "one fused kernel",
    "fold_scale_axis.py": "folded into the conv2d weights",
    "combine_parallel_dense.py": "one batch_matmul",
    "combine_parallel_conv2d.py": "two conv2d became one",
    "tpulang_conv.py": "Conv_origin.mlir written",
}


@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_example_runs(script, source_dir, tmp_path):
    # Run from a scratch folder (scripts may write files there), so the import path is made absolute.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    result = subprocess.run([sys.executable, str(source_dir / "examples" / "python" / script)],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert EXAMPLES[script] in result.stdout
