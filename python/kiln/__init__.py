"""kiln: a deep-learning compiler (ONNX in, a Relay-like IR, passes, C code out) with TVM's Python names.

    import kiln
    mod, params = kiln.frontend.from_onnx(onnx_model, shape={"input": (1, 3, 224, 224)})
    with kiln.transform.PassContext(opt_level=3):
        lib = kiln.build(mod, target="c", params=params)
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    module.set_input("input", data)
    module.run()
    out = module.get_output(0).numpy()

Programs are also built in Python: ``kiln.ir`` (var, const, Function, Tuple, IRModule.from_expr)
with ``kiln.op``'s builders, one per registered op (``kiln.op.nn.conv2d(x, w, padding=(1, 1))``);
``kiln.tpulang`` is TpuLang's network builder, writing Top MLIR or a kiln module (``to_kiln``).

Every error kiln reports is a :class:`KilnError` (a ``RuntimeError``) carrying kiln's message.
"""

from ._core import KilnError
from . import ir, op, frontend, transform, runtime, graph_executor, tpulang
from .build_module import build, GraphExecutorFactoryModule
from .runtime import Device, NDArray, cpu

__all__ = [
    "KilnError",
    "ir",
    "op",
    "tpulang",
    "frontend",
    "transform",
    "runtime",
    "graph_executor",
    "build",
    "GraphExecutorFactoryModule",
    "Device",
    "NDArray",
    "cpu",
]
