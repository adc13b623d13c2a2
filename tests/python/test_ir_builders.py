"""kiln.ir's builders and kiln.op's generated op builders: structure, printing, types, errors."""

import inspect

import numpy as np
import pytest

import kiln
from kiln import ir, op


def test_var_const_and_call_print_as_ir_text():
    x = ir.var("x", shape=(1, 10))
    y = op.add(x, ir.const(1.0))
    assert str(x) == "%x"
    assert str(y).startswith("add(%x, 1f")
    assert y.kind == "Call" and y.op_name == "add"
    assert y.checked_type == "Tensor[(1, 10), float32]"


def test_const_keeps_array_dtype_and_values():
    data = np.arange(6, dtype="int64").reshape(2, 3)
    c = ir.const(data)
    assert c.kind == "Constant"
    np.testing.assert_array_equal(ir.constant_value(c), data)
    assert ir.constant_value(ir.const(2.5)).dtype == np.float32


def test_op_namespaces_follow_the_op_names():
    assert "nn.conv2d" in op.list_ops() and "add" in op.list_ops()
    assert op.nn.conv2d is op.get("nn.conv2d")
    assert callable(op.nn.relu) and callable(op.nn.dense) and callable(op.qnn.quantize)
    from kiln.op import nn  # the namespaces import as modules

    assert nn.batch_norm is op.nn.batch_norm


def test_builder_signature_lists_operands_and_attr_defaults():
    signature = inspect.signature(op.nn.conv2d)
    assert list(signature.parameters)[:2] == ["data", "weight"]
    assert signature.parameters["strides"].default == (1, 1)
    assert signature.parameters["groups"].default == 1
    assert "padding" in op.nn.conv2d.__doc__


def test_conv2d_attrs_are_kept_as_written_and_typed():
    x = ir.var("x", shape=(1, 3, 8, 8))
    w = ir.var("w", shape=(4, 3, 3, 3))
    y = op.nn.conv2d(x, w, strides=(1, 1), padding=(1, 1), channels=4, kernel_size=(3, 3))
    assert y.attrs == {"strides": (1, 1), "padding": (1, 1), "channels": 4, "kernel_size": (3, 3)}
    assert y.checked_type == "Tensor[(1, 4, 8, 8), float32]"
    # Typed now, the call prints its type too.
    assert str(y).split(" /*")[0] == "nn.conv2d(%x, %w, strides=[1, 1], padding=[1, 1], channels=4, kernel_size=[3, 3])"


def test_numpy_attribute_values():
    x, w = ir.var("x", shape=(1, 1, 4, 4)), ir.var("w", shape=(1, 1, 3, 3))
    y = op.nn.conv2d(x, w, padding=np.array([1, 1]), groups=np.int64(1))
    assert y.attrs == {"padding": (1, 1), "groups": 1}
    assert y.checked_type == "Tensor[(1, 1, 4, 4), float32]"


def test_operands_by_keyword():
    x = ir.var("x", shape=(2, 4))
    w = ir.var("w", shape=(3, 4))
    assert op.nn.dense(data=x, weight=w).checked_type == "Tensor[(2, 3), float32]"


def test_batch_norm_is_a_tuple_that_unpacks():
    x = ir.var("x", shape=(1, 4, 2, 2))
    params = [ir.var(n, shape=(4,)) for n in ("g", "b", "m", "v")]
    result = op.nn.batch_norm(x, *params)
    assert len(result) == 3
    out, mean, var = result
    assert out.kind == "TupleGetItem" and "nn.batch_norm(%x, %g, %b, %m, %v)" in str(out)
    assert out.checked_type == "Tensor[(1, 4, 2, 2), float32]"
    assert mean.checked_type == "Tensor[(4), float32]"


def test_a_tensor_expression_is_truthy():
    assert ir.var("x", shape=(2,))  # not len(): a tensor has none


def test_tuples_and_tuple_get_item():
    a, b = ir.var("a", shape=(2,)), ir.var("b", shape=(3,))
    t = ir.Tuple([a, b])
    assert len(t) == 2
    assert ir.TupleGetItem(t, 1).checked_type == "Tensor[(3), float32]"
    assert t[0].checked_type == "Tensor[(2), float32]"


def test_operators_call_the_arithmetic_ops():
    x = ir.var("x", shape=(3,))
    e = (x + 1.0) * x - x / 2.0
    assert ir.op_counts(e) == {"add": 1, "multiply": 1, "subtract": 1, "divide": 1}


def test_module_from_expr_and_evaluate():
    x = ir.var("x", shape=(2, 3))
    mod = ir.IRModule.from_expr(ir.Function([x], op.nn.relu(op.add(x, x))))
    assert mod.functions == ["main"] and mod.input_names == ["x"]
    assert str(mod).startswith("def @main(%x: Tensor[(2, 3), float32])")
    data = np.array([[-1, 0, 1], [2, -3, 4]], dtype="float32")
    out, = ir.evaluate(mod, data)
    np.testing.assert_array_equal(out, np.maximum(2 * data, 0))


def test_module_from_a_body_takes_its_free_variables():
    x, y = ir.var("x", shape=(2,)), ir.var("y", shape=(2,))
    mod = ir.IRModule.from_expr(op.multiply(x, op.add(y, x)))
    assert mod.input_names == ["x", "y"]


def test_module_of_several_functions_and_global_calls():
    mod = ir.IRModule()
    a = ir.var("a", shape=(4,))
    mod["double"] = ir.Function([a], op.add(a, a))
    z = ir.var("z", shape=(4,))
    mod[ir.GlobalVar("main")] = ir.Function([z], ir.GlobalVar("double")(z))
    assert mod.functions == ["double", "main"] and "main" in mod
    assert "@double(%z)" in str(mod["main"])
    np.testing.assert_array_equal(ir.evaluate(mod, np.ones(4, "float32"))[0], np.full(4, 2, "float32"))


def test_function_attributes():
    x = ir.var("x", shape=(1,))
    fn = ir.Function([x], x).with_attr("Inline", 1)
    assert fn.attrs == {"Inline": 1}
    assert "Inline=1" in str(fn)


def test_passes_run_on_built_modules():
    x = ir.var("x", shape=(10, 20))
    y = op.exp(op.add(x, x))
    fused = kiln.transform.FuseOps()(ir.IRModule.from_expr(ir.Function([x], y)))
    assert ir.op_counts(fused) == {"add": 1, "exp": 1, "fn(Primitive)": 1}


def test_built_module_compiles_and_runs():
    x = ir.var("x", shape=(2, 2))
    w = ir.const(np.array([[1, 2], [3, 4]], dtype="float32"))
    mod = ir.IRModule.from_expr(ir.Function([x], op.nn.dense(x, w)))
    lib = kiln.build(mod, target="c")
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    data = np.array([[1, 0], [0, 1]], dtype="float32")
    module.set_input("x", data)
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), data @ np.array([[1, 2], [3, 4]]).T)


# Errors: checked by kiln's op definitions, reported as KilnError naming the op and attribute.

def test_unknown_attribute_names_op_and_attr():
    x, w = ir.var("x", shape=(1, 1, 4, 4)), ir.var("w", shape=(1, 1, 3, 3))
    with pytest.raises(kiln.KilnError, match=r"nn\.conv2d.*unknown attribute 'stride'"):
        op.nn.conv2d(x, w, stride=(1, 1))


def test_wrong_attribute_kind_names_op_and_attr():
    x, w = ir.var("x", shape=(1, 1, 4, 4)), ir.var("w", shape=(1, 1, 3, 3))
    with pytest.raises(kiln.KilnError, match=r"nn\.conv2d.*attribute 'padding' has the wrong kind"):
        op.nn.conv2d(x, w, padding="same")
    with pytest.raises(kiln.KilnError, match=r"unsupported attribute value"):
        op.nn.conv2d(x, w, padding={1: 2})


def test_wrong_argument_count():
    x = ir.var("x", shape=(2,))
    with pytest.raises(kiln.KilnError, match=r"'add'.*wrong number of arguments \(expected 2, found 1\)"):
        op.add(x)
    with pytest.raises(kiln.KilnError, match=r"wrong number of arguments"):
        op.nn.relu(x, x)


def test_operand_given_twice():
    x = ir.var("x", shape=(2,))
    with pytest.raises(kiln.KilnError, match="given both by position and by keyword"):
        op.add(x, x, lhs=x)


def test_type_errors_surface_when_typed():
    a, b = ir.var("a", shape=(2, 3)), ir.var("b", shape=(4, 5))
    bad = op.nn.dense(a, b)
    with pytest.raises(kiln.KilnError, match=r"nn\.dense"):
        bad.checked_type
    with pytest.raises(kiln.KilnError, match=r"nn\.dense"):
        ir.IRModule.from_expr(ir.Function([a, b], bad))


def test_bad_builder_inputs():
    with pytest.raises(kiln.KilnError, match="not str"):
        op.add("x", "y")
    with pytest.raises(kiln.KilnError, match="unknown op"):
        op.get("nn.no_such_op")
    with pytest.raises(kiln.KilnError):
        ir.var("x", shape=(2,), dtype="float31")
    with pytest.raises(kiln.KilnError, match="variables"):
        ir.Function([ir.const(1.0)], ir.const(1.0))
    with pytest.raises(kiln.KilnError, match="not a tuple"):
        len(ir.var("x", shape=(2,)))
    with pytest.raises(kiln.KilnError):
        ir.IRModule()["missing"]


def test_evaluate_checks_argument_count():
    x = ir.var("x", shape=(2,))
    with pytest.raises(kiln.KilnError, match="takes 1 arguments, 2 given"):
        ir.evaluate(ir.Function([x], x), np.zeros(2, "float32"), np.zeros(2, "float32"))
