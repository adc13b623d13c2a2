#!/usr/bin/env python3
"""CombineParallelDense (the seed notes' Relay transform write-up, in kiln): two dense ops on
the same input with same-shaped weights become one batched matmul (stack, batch_matmul,
split), computing the same.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/combine_parallel_dense.py
"""

import numpy as np

import kiln
from kiln import ir, op


def before(x, w1, w2):
    y1 = op.nn.dense(x, w1)
    y2 = op.nn.dense(x, w2)
    return ir.Function([x, w1, w2], ir.Tuple((y1, y2)))


i, j, k = 3, 5, 4  # 3x4 times two 4x5: two 3x5
x = ir.var("x", shape=(i, k))
w1 = ir.var("w1", shape=(j, k))
w2 = ir.var("w2", shape=(j, k))

mod = kiln.transform.InferType()(ir.IRModule.from_expr(before(x, w1, w2)))
print(mod)
combined = kiln.transform.CombineParallelDense(min_num_branches=2)(mod)
print(combined)

counts = ir.op_counts(combined)
assert "nn.dense" not in counts and counts.get("nn.batch_matmul") == 1, counts

rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype("float32") for s in ((i, k), (j, k), (j, k))]
for got, want in zip(ir.evaluate(combined, *args), ir.evaluate(mod, *args)):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
print("two dense ops became one batch_matmul; outputs equal")
