#!/usr/bin/env python3
"""FuseOps (the seed notes' Relay transform write-up, in kiln): five elementwise adds and an
exp fuse into one primitive function, built as one kernel; a reduction (sum) ends a group,
so add-add-sum and the last add become two functions.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/fuse_ops.py
"""

import json

import numpy as np

import kiln
from kiln import ir, op


def simple():
    x = ir.var("x", shape=(10, 20))
    y = op.add(x, x)
    for _ in range(4):
        y = op.add(y, y)
    return ir.IRModule.from_expr(ir.Function([x], op.exp(y)))


def with_reduction():
    x = ir.var("x", shape=(20, 20))
    y1 = op.add(x, x)
    y2 = op.add(y1, y1)
    y3 = op.sum(y2, axis=[-1])
    return ir.IRModule.from_expr(ir.Function([x], op.add(y3, y3)))


def kernels(mod, opt_level):
    """The kernel nodes of the graph kiln.build makes at that opt level."""
    with kiln.transform.PassContext(opt_level=opt_level):
        lib = kiln.build(mod, target="c")
    nodes = json.loads(lib.get_graph_json())["nodes"]
    return lib, [n for n in nodes if n["op"] != "null"]


mod = simple()
print(mod)
_, unfused = kernels(mod, opt_level=0)
print(f"opt_level=0: {len(unfused)} kernels:", [n["name"] for n in unfused])

fused = kiln.transform.FuseOps()(mod)
print(fused)
assert ir.op_counts(fused)["fn(Primitive)"] == 1, ir.op_counts(fused)
lib, fused_kernels = kernels(fused, opt_level=0)
print(f"after FuseOps: {len(fused_kernels)} kernel:", [n["name"] for n in fused_kernels])
assert len(unfused) == 6 and len(fused_kernels) == 1

module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
data = np.random.default_rng(0).uniform(-0.1, 0.1, (10, 20)).astype("float32")
module.set_input("x", data)
module.run()
np.testing.assert_allclose(module.get_output(0).numpy(), np.exp(data * 32), rtol=1e-5)

mod = with_reduction()
fused = kiln.transform.FuseOps()(mod)
print(fused)
counts = ir.op_counts(fused)
assert counts["fn(Primitive)"] == 2, counts
data = np.random.default_rng(1).standard_normal((20, 20)).astype("float32")
np.testing.assert_allclose(ir.evaluate(fused, data)[0], ir.evaluate(mod, data)[0], rtol=1e-5)
print("one fused kernel for add x5 + exp; two functions around the sum; outputs equal")
