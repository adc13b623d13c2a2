#!/usr/bin/env python3
"""Inline (the seed notes' Relay transform write-up, in kiln): @g1, marked Inline=1, is
substituted into @main and removed; @g2, not marked, stays a call.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/inline.py
"""

import numpy as np

import kiln
from kiln import ir, op

mod = ir.IRModule()

x1 = ir.var("x1", shape=(1, 10))
fn1 = ir.Function([x1], x1)
fn1 = fn1.with_attr("Inline", 1)
g1 = ir.GlobalVar("g1")
mod[g1] = fn1

x2 = ir.var("x2", shape=(1, 10))
fn2 = ir.Function([x2], x2)
g2 = ir.GlobalVar("g2")
mod[g2] = fn2

p0 = ir.var("p0", shape=(1, 10))
mod["main"] = ir.Function([p0], op.add(g1(p0), g2(p0)))

print("----------before----------")
print(mod)
mod_after = kiln.transform.Inline()(mod)
print("----------after----------")
print(mod_after)

assert sorted(mod_after.functions) == ["g2", "main"], mod_after.functions
text = str(mod_after["main"])
assert "@g1" not in text and "@g2(%p0)" in text and "add(%p0," in text, text

data = np.arange(10, dtype="float32").reshape(1, 10)
np.testing.assert_array_equal(ir.evaluate(mod_after, data)[0], ir.evaluate(mod, data)[0])
print("@g1 inlined, @g2 kept; outputs equal before and after")
