"""kiln.frontend: model importers, as tvm.relay.frontend."""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from ._core import KilnError
from .ir import IRModule
from .runtime import NDArray, params_from_npy


def from_onnx(
    model: Any,
    shape: Optional[Mapping[str, Sequence[int]]] = None,
    dtype: Union[str, Mapping[str, str]] = "float32",
    freeze_params: bool = False,
) -> Tuple[IRModule, Dict[str, NDArray]]:
    """Converts an ONNX model into an IRModule and its parameters (tvm.relay.frontend.from_onnx).

    model: an ``onnx.ModelProto``, its serialized bytes, or the path of a .onnx file (external
        data files are found beside it).
    shape: input name -> shape, overriding the declared one (e.g. to fix a batch dimension).
    dtype: input name -> dtype overriding the declared element type; a single string is the
        default of TVM's signature and changes nothing, as ONNX inputs declare their types.
    freeze_params: initializers become constants in the body instead of parameters of @main.

    Returns ``(mod, params)``: ``@main`` takes the real inputs in ONNX order and then the
    initializers it uses, whose values ``params`` holds by name (empty when frozen). Errors
    (a malformed model, an unsupported op) are :class:`kiln.KilnError`.
    """
    shapes = {str(name): [int(d) for d in dims] for name, dims in (shape or {}).items()}
    if isinstance(dtype, str):
        _core.check_dtype(dtype)
        dtypes: Dict[str, str] = {}
    elif isinstance(dtype, Mapping):
        dtypes = {str(name): str(t) for name, t in dtype.items()}
    else:
        raise KilnError(f"from_onnx: dtype must be a str or a dict of input name -> dtype, not {type(dtype).__name__}")
    if hasattr(model, "SerializeToString"):
        source, is_path = model.SerializeToString(), False
    elif isinstance(model, (bytes, bytearray, memoryview)):
        source, is_path = bytes(model), False
    elif isinstance(model, (str, os.PathLike)):
        source, is_path = os.fspath(model), True
    else:
        raise KilnError(f"from_onnx: expected an onnx.ModelProto, bytes or a path, not {type(model).__name__}")
    module, params = _core.import_onnx(source, is_path, shapes, dtypes, bool(freeze_params))
    return IRModule(module), params_from_npy(params)
