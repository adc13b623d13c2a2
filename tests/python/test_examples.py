"""The scripts of examples/python run and check their own results."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("script", ["from_onnx_build_run.py"])
def test_example_runs(script, source_dir):
    result = subprocess.run([sys.executable, str(source_dir / "examples" / "python" / script)],
                            capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "equal to PyTorch's logits" in result.stdout
