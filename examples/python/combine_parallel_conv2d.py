#!/usr/bin/env python3
"""CombineParallelConv2D (the seed notes' Relay transform write-up, in kiln): two 1x1 conv2d on
the same input become one conv2d over the concatenated weights, sliced back into the two
results; the max_pool2d beside them is untouched. Outputs are equal.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/combine_parallel_conv2d.py
"""

import numpy as np

import kiln
from kiln import ir, op


def before(x, w1, w2):
    y1 = op.nn.conv2d(x, w1)
    y2 = op.nn.conv2d(x, w2)
    y3 = op.nn.max_pool2d(x)
    mod = ir.IRModule.from_expr(ir.Function([x, w1, w2], ir.Tuple((y1, y2, y3))))
    return kiln.transform.InferType()(mod)


x_shape, channels1, channels2 = (1, 4, 16, 16), 4, 4
x = ir.var("x", shape=x_shape)
w1 = ir.var("w1", shape=(channels1, x_shape[1], 1, 1))
w2 = ir.var("w2", shape=(channels2, x_shape[1], 1, 1))

mod = before(x, w1, w2)
print("------before------")
print(mod)
combined = kiln.transform.CombineParallelConv2D(min_num_branches=2)(mod)
print("------after------")
print(combined)

counts = ir.op_counts(combined)
assert counts["nn.conv2d"] == 1 and counts["nn.max_pool2d"] == 1, counts

rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype("float32") for s in (x_shape, (channels1, 4, 1, 1), (channels2, 4, 1, 1))]
for got, want in zip(ir.evaluate(combined, *args), ir.evaluate(mod, *args)):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
print("two conv2d became one; outputs equal")
