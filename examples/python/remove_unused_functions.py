#!/usr/bin/env python3
"""RemoveUnusedFunctions (the seed notes' Relay transform write-up, in kiln): starting from
@main, the functions reached through global references stay; @fn2, called by nobody, goes.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/remove_unused_functions.py
"""

import kiln
from kiln import ir, op

mod = ir.IRModule()

x = ir.var("x", shape=(1, 1000))
mod["fn1"] = ir.Function([x], x)

y = ir.var("y", shape=(1, 1000))
mod["fn2"] = ir.Function([y], y)

z = ir.var("z", shape=(1, 1000))
mod["main"] = ir.Function([z], op.add(z, ir.GlobalVar("fn1")(z)))

print("----------before----------")
print(mod.get_global_vars())
print(mod)

print("----------after----------")
mod = kiln.transform.RemoveUnusedFunctions()(mod)
print(mod)

assert mod.functions == ["fn1", "main"], mod.functions
print("removed @fn2; kept", mod.functions)
