"""Shared fixtures: the source tree, the `kiln` binary (KILN_BINARY, set by ctest) and models."""

import os
import pathlib

import pytest

try:
    import kiln  # noqa: F401
except ImportError as e:
    pytest.exit(f"cannot import kiln ({e}): build the kiln_python target and put <build>/python on PYTHONPATH",
                returncode=1)

SOURCE_DIR = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CNN_DIR = SOURCE_DIR / "examples" / "cnn"


@pytest.fixture(scope="session")
def source_dir() -> pathlib.Path:
    return SOURCE_DIR


@pytest.fixture(scope="session")
def kiln_binary() -> str:
    binary = os.environ.get("KILN_BINARY")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("KILN_BINARY does not name the kiln command line (ctest sets it)")
    return binary


@pytest.fixture(scope="session")
def cnn_model() -> pathlib.Path:
    return CNN_DIR / "model.onnx"


@pytest.fixture(scope="session")
def cnn_input():
    import numpy as np

    return np.load(CNN_DIR / "inputs" / "input.npy")
