#!/usr/bin/env python3
"""SimplifyInference (the seed notes' Relay transform write-up, in kiln): batch_norm becomes
multiply / add with its scale and shift, dropout disappears; both modules compute the same.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/simplify_inference.py
"""

import numpy as np

import kiln
from kiln import ir, op

x = ir.var("x", shape=(1, 10))
gamma, beta, mean, var = (
    ir.var("x", shape=(10,)),
    ir.var("y", shape=(10,)),
    ir.var("a", shape=(10,)),
    ir.var("b", shape=(10,)),
)

bn, _, _ = op.nn.batch_norm(x, gamma, beta, mean, var)
out = op.nn.dropout(bn)[0]
mod = ir.IRModule.from_expr(ir.Function([x, gamma, beta, mean, var], out))

print("----------before----------")
print(mod)

print("----------after----------")
mod_after = kiln.transform.SimplifyInference()(kiln.transform.InferType()(mod))
print(mod_after)

counts = ir.op_counts(mod_after)
assert "nn.batch_norm" not in counts and "nn.dropout" not in counts, counts
assert counts["multiply"] == 3 and counts["add"] == 3, counts

rng = np.random.default_rng(0)
args = [rng.standard_normal((1, 10)).astype("float32")] + [rng.standard_normal(10).astype("float32")
                                                           for _ in range(3)]
args.append(rng.uniform(0.5, 2.0, 10).astype("float32"))  # a variance is positive
before, = ir.evaluate(mod, *args)
after, = ir.evaluate(mod_after, *args)
np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6)
print("no batch_norm or dropout left; outputs equal before and after")
