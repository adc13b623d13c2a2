"""kiln.runtime: devices, tensors and loading compiled artifacts, as tvm.runtime."""

from __future__ import annotations

import io
import json
import os
from typing import Any, Callable, Dict, Union

import numpy as np

from . import _core
from ._core import KilnError


class Device:
    """Where a graph runs. kiln runs on the host CPU only."""

    def __init__(self, device_type: str = "cpu", device_id: int = 0):
        if device_type != "cpu":
            raise KilnError(f"unsupported device '{device_type}': kiln's Python runtime runs on cpu")
        if device_id != 0:
            raise KilnError(f"unsupported device id {device_id}: there is one cpu device, 0")
        self.device_type = device_type
        self.device_id = device_id

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (other.device_type, other.device_id) == (self.device_type, self.device_id)


def cpu(dev_id: int = 0) -> Device:
    """The host CPU (tvm.cpu)."""
    return Device("cpu", dev_id)


class NDArray:
    """A tensor kiln produced, as tvm.nd.NDArray: ``.numpy()`` gives a numpy array, and numpy converts it."""

    def __init__(self, array: np.ndarray):
        self._array = array

    def numpy(self) -> np.ndarray:
        """The values as a numpy array (a copy)."""
        return self._array.copy()

    asnumpy = numpy

    @property
    def shape(self):
        return self._array.shape

    @property
    def dtype(self) -> str:
        return str(self._array.dtype)

    def __array__(self, dtype=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        return f"<kiln.NDArray shape={self.shape}, dtype={self.dtype}>\n{self._array!r}"


ArrayLike = Union[np.ndarray, NDArray, Any]


def to_npy(value: ArrayLike, what: str) -> bytes:
    """The .npy bytes kiln's C++ side reads; an array numpy cannot store plainly is a KilnError."""
    array = np.asarray(value.numpy() if isinstance(value, NDArray) else value)
    if not array.flags.c_contiguous:  # ascontiguousarray alone would make a 0-d array 1-d
        array = np.ascontiguousarray(array)
    if array.dtype.hasobject or array.dtype.fields is not None:
        raise KilnError(f"{what}: unsupported array dtype {array.dtype}")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def from_npy(data: bytes) -> np.ndarray:
    return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)


def params_to_npy(params: Dict[str, ArrayLike] | None):
    return [(name, to_npy(value, f"parameter '{name}'")) for name, value in (params or {}).items()]


def params_from_npy(params) -> Dict[str, NDArray]:
    return {name: NDArray(from_npy(data)) for name, data in params}


def executor_factory(artifact: _core.Artifact) -> Callable[..., _core.Executor]:
    """The ``lib["default"]`` function: device -> a graph executor for GraphModule."""

    def create(device: Device = None, num_threads: int = 1) -> _core.Executor:
        if device is not None and not isinstance(device, Device):
            raise KilnError(f"expected a kiln.Device such as kiln.cpu(0), got {type(device).__name__}")
        return _core.Executor(artifact, num_threads)

    return create


class Module:
    """A compiled artifact folder (graph.json, lib.so, params.bin) loaded to run."""

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self._artifact = _core.Artifact.load(self.path)

    def __getitem__(self, name: str) -> Callable[..., _core.Executor]:
        if name != "default":
            raise KilnError(f"unknown function '{name}' of a kiln artifact: only 'default'")
        return executor_factory(self._artifact)

    def get_graph_json(self) -> str:
        """The graph plan (TVM's graph-executor JSON)."""
        with open(os.path.join(self.path, "graph.json"), encoding="utf-8") as f:
            return f.read()

    def get_graph(self) -> dict:
        return json.loads(self.get_graph_json())

    @property
    def input_names(self):
        return [name for name, _, _ in self._artifact.inputs]

    @property
    def output_names(self):
        return [name for name, _, _ in self._artifact.outputs]


def load_module(path: Union[str, os.PathLike]) -> Module:
    """Loads an artifact folder written by ``export_library`` or ``kiln compile``."""
    return Module(path)
