"""kiln.build: from an IRModule to a compiled graph (tvm.relay.build)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Callable, Dict, Optional, Union

from . import _core
from ._core import KilnError
from .ir import IRModule
from .runtime import ArrayLike, NDArray, executor_factory, params_from_npy, params_to_npy
from .transform import PassContext


class GraphExecutorFactoryModule:
    """What :func:`build` returns: the graph plan, the generated kernels and the parameters.

    ``export_library(path)`` writes the artifact folder ``kiln compile`` writes (graph.json,
    params.bin, kernels.c, lib.so); ``lib["default"](kiln.cpu(0))`` makes an executor for
    :class:`kiln.graph_executor.GraphModule`.
    """

    def __init__(self, built: _core.BuiltModel):
        self._built = built
        self._artifact: Optional[_core.Artifact] = None

    def get_graph_json(self) -> str:
        """The graph plan in TVM's graph-executor JSON schema."""
        return self._built.graph_json

    def get_params(self) -> Dict[str, NDArray]:
        """The parameters the graph reads, by name (after build-time evaluation)."""
        return params_from_npy(self._built.params)

    def get_source(self) -> str:
        """The generated C code (empty when every node runs a reference kernel)."""
        return self._built.kernels_c

    @property
    def num_kernels(self) -> int:
        return self._built.num_kernels

    def export_library(self, path: Union[str, os.PathLike]) -> None:
        """Writes the artifact folder at ``path`` (compiling lib.so with the system C compiler)."""
        self._built.write(os.fspath(path))

    def __getitem__(self, name: str) -> Callable[..., _core.Executor]:
        if name != "default":
            raise KilnError(f"unknown function '{name}' of a built module: only 'default'")
        if self._artifact is None:
            folder = tempfile.mkdtemp(prefix="kiln-")
            try:
                path = os.path.join(folder, "model.kiln")
                self._built.write(path)
                self._artifact = _core.Artifact.load(path)  # lib.so stays mapped once removed
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return executor_factory(self._artifact)

    def __repr__(self) -> str:
        nodes = len(json.loads(self._built.graph_json).get("nodes", []))
        return f"<kiln.GraphExecutorFactoryModule: {nodes} graph nodes, {self.num_kernels} kernels>"


def build(
    mod: IRModule,
    target: str = "c",
    params: Optional[Dict[str, ArrayLike]] = None,
    mod_name: str = "default",
) -> GraphExecutorFactoryModule:
    """Compiles ``mod`` (tvm.relay.build): the optimisation passes of the current PassContext's
    opt level, operator fusion, one C kernel per distinct fused function and a memory plan.

    target: "c" (kiln's C code generator for this machine; "llvm" is accepted as its alias).
    params: values of @main's parameters known now, by name (what from_onnx returns); the
        other parameters are the graph's inputs.
    Outside any ``with kiln.transform.PassContext(...)`` the opt level is 3, as ``kiln compile``'s.
    The GIL is released while kiln compiles. Errors are :class:`kiln.KilnError`.
    """
    if not isinstance(mod, IRModule):
        raise KilnError(f"kiln.build takes a kiln.ir.IRModule, not {type(mod).__name__}")
    if mod_name != "default":
        raise KilnError(f"unsupported mod_name '{mod_name}': only 'default'")
    if not isinstance(target, str):
        raise KilnError(f"target must be a string such as 'c', not {type(target).__name__}")
    ctx = PassContext.entered() or PassContext(opt_level=3)
    built = _core.build(mod._module, params_to_npy(params), ctx._make(), (target.split() or [""])[0])
    return GraphExecutorFactoryModule(built)
