#!/usr/bin/env python3
"""FoldScaleAxis (the seed notes' Relay transform write-up, in kiln): the per-channel multiply
after a conv2d with constant weights is folded into the weights, leaving one conv2d that
computes the same.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/fold_scale_axis.py
"""

import numpy as np

import kiln
from kiln import ir, op

I = N = 1  # noqa: E741 (the seed's names)
O = C = 2
H = W = 3

rng = np.random.default_rng(0)
x = ir.var("x", shape=(1, N, 10, 10))
weight = ir.const(rng.standard_normal((O, I, H, W)).astype("float32"))
scale = ir.const(rng.standard_normal((C, 1, 1)).astype("float32"))

y = op.nn.conv2d(x, weight, channels=C, kernel_size=(3, 3), padding=(1, 1))
y = op.multiply(y, scale)
mod = ir.IRModule.from_expr(ir.Function([x], y))
print("----------before----------")
print(mod)

folded = kiln.transform.FoldScaleAxis()(mod)
print("----------after----------")
print(folded)

counts = ir.op_counts(folded)
assert counts == {"nn.conv2d": 1}, counts
data = rng.standard_normal((1, N, 10, 10)).astype("float32")
np.testing.assert_allclose(ir.evaluate(folded, data)[0], ir.evaluate(mod, data)[0], rtol=1e-4, atol=1e-5)
print("the multiply is folded into the conv2d weights; outputs equal")
