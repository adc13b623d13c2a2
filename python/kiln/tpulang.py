"""kiln.tpulang: TpuLang (sophgo tpu-mlir's network builder) on kiln, name for name with the C++
builder (kiln/tpulang/*.h) and with tpu-mlir's Python signatures.

    import kiln.tpulang as tpul
    tpul.init("cpu")
    x = tpul.Tensor(shape=[1, 3, 32, 32], name="x")
    w = tpul.Tensor(shape=[8, 3, 3, 3], data=weights, name="w")
    y = tpul.conv_v2(x, w, stride=[1, 1], pad=[1, 1, 1, 1], out_name="y")
    tpul.compile("Conv", [x], [y])            # Conv_origin.mlir + Conv_TOP_F32_all_weight.npz
    mod, params = tpul.to_kiln([x], [y])      # a kiln module that builds and runs
    tpul.deinit()

Lists may be given as None (the default), one number or a list; an op given wrong ranks,
list lengths, dtypes or a tensor of another graph is a :class:`kiln.KilnError` naming the op
(``tpulang.conv_v2``) and the argument.
"""

from __future__ import annotations

import os
from typing import Dict, List, Sequence, Tuple

from . import _core
from .ir import IRModule
from .runtime import NDArray, params_from_npy

_tpulang = _core.tpulang

Tensor = _tpulang.Tensor
init = _tpulang.init
deinit = _tpulang.deinit

conv = _tpulang.conv
conv_v2 = _tpulang.conv_v2
deconv = _tpulang.deconv
matmul = _tpulang.matmul
add = _tpulang.add
sub = _tpulang.sub
mul = _tpulang.mul
div = _tpulang.div
relu = _tpulang.relu
leaky_relu = _tpulang.leaky_relu
prelu = _tpulang.prelu
sigmoid = _tpulang.sigmoid
tanh = _tpulang.tanh
gelu = _tpulang.gelu
softmax = _tpulang.softmax
clamp = _tpulang.clamp
layer_norm = _tpulang.layer_norm
maxpool = _tpulang.maxpool
avgpool = _tpulang.avgpool
concat = _tpulang.concat
reshape = _tpulang.reshape
permute = _tpulang.permute
squeeze = _tpulang.squeeze
unsqueeze = _tpulang.unsqueeze
slice = _tpulang.slice  # noqa: A001 (TpuLang's name)
requant_fp_to_int = _tpulang.requant_fp_to_int
dequant_int_to_fp = _tpulang.dequant_int_to_fp
requant_int = _tpulang.requant_int
dequant_int = _tpulang.dequant_int


def compile(name: str, inputs: Sequence[Tensor], outputs: Sequence[Tensor], dir: str = ".") -> Tuple[str, str]:  # noqa: A001
    """Writes DIR/NAME_origin.mlir (Top dialect) and DIR/NAME_TOP_F32_all_weight.npz for the
    current graph; returns the two paths."""
    os.makedirs(dir, exist_ok=True)
    return tuple(_tpulang.compile(name, list(inputs), list(outputs), str(dir)))


def emit_top(name: str, inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> str:
    """The Top dialect text :func:`compile` writes, without writing files."""
    return _tpulang.emit_top(name, list(inputs), list(outputs))


def to_kiln(inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> Tuple[IRModule, Dict[str, NDArray]]:
    """The current graph as a kiln module (@main takes the inputs, then the weights) and the
    weights as params, ready for ``kiln.build(mod, params=params)``."""
    module, params = _tpulang.to_kiln(list(inputs), list(outputs))
    return IRModule(module), params_from_npy(params)


__all__: List[str] = [name for name in dir() if not name.startswith("_") and name not in (
    "annotations", "os", "Dict", "List", "Sequence", "Tuple", "IRModule", "NDArray", "params_from_npy")]
