"""kiln.op: one builder per registered op, generated from the op registry (as tvm.relay's ops).

The namespace follows the op name's dots: ``kiln.op.add(a, b)``, ``kiln.op.nn.conv2d(data,
weight, strides=(1, 1), padding=(1, 1))``, ``kiln.op.qnn.quantize(...)``. Positional (or
keyword) arguments are the op's operands, in its declared order; arrays and scalars become
constants. Other keywords are the op's attributes, checked by kiln as the op declares them:
an unknown attribute, a value of the wrong kind or a wrong operand count is a
:class:`kiln.KilnError` naming the op. ``help(kiln.op.nn.conv2d)`` lists operands and attributes
with their defaults. :func:`list_ops` names every op, :func:`get` finds one by name.
"""


# Imported under private names: the module's public names are the ops (and list_ops, get).
import inspect as _inspect
import sys as _sys
import types as _types
from typing import Any as _Any, Callable as _Callable, Dict as _Dict, List as _List

from . import _core
from ._core import KilnError as _KilnError
from .ir import Expr as _Expr, as_expr as _as_expr

_builders: _Dict[str, _Callable[..., _Expr]] = {}


def _collect_operands(op_name: str, arg_names: _List[str], variadic: bool, args: tuple, kwargs: _Dict[str, _Any]):
    operands = list(args)
    # A variadic op takes its operands as a list too (kiln.op.concatenate([a, b], axis=0)).
    if variadic and len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    for name in arg_names[len(operands):]:
        if name not in kwargs:
            break
        operands.append(kwargs.pop(name))
    for name in arg_names:
        if name in kwargs:
            raise _KilnError(f"{op_name}: operand '{name}' given both by position and by keyword")
    return [_as_expr(o)._expr for o in operands]


def _signature(args, variadic: bool, attrs) -> _inspect.Signature:
    params = []
    for name, optional in args:
        default = None if optional else _inspect.Parameter.empty
        params.append(_inspect.Parameter(name, _inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    if variadic:
        params.append(_inspect.Parameter("more", _inspect.Parameter.VAR_POSITIONAL))
    for name, _kind, default, required, _doc in attrs:
        params.append(
            _inspect.Parameter(name, _inspect.Parameter.KEYWORD_ONLY,
                              default=_inspect.Parameter.empty if required else default))
    return _inspect.Signature(params, return_annotation=_Expr)


def _docstring(op_name: str, args, variadic: bool, attrs, doc: str) -> str:
    lines = [doc or f"The {op_name} op.", "", "Operands: " + (", ".join(
        name + (" (optional)" if optional else "") for name, optional in args) or "none") +
             (", ... (any number)" if variadic else ""), ""]
    if attrs:
        lines.append("Attributes:")
        for name, kind, default, required, attr_doc in attrs:
            value = "required" if required else f"default {default!r}"
            lines.append(f"    {name} ({kind}, {value}){': ' + attr_doc if attr_doc else ''}")
    return "\n".join(lines)


def _make_builder(op_name: str, args, variadic: bool, attrs, doc: str) -> _Callable[..., _Expr]:
    arg_names = [name for name, _ in args]

    def builder(*operands: _Any, **kwargs: _Any) -> _Expr:
        exprs = _collect_operands(op_name, arg_names, variadic, operands, kwargs)
        return _Expr(_core.call_op(op_name, exprs, kwargs))

    short = op_name.rsplit(".", 1)[-1]
    builder.__name__ = short
    builder.__qualname__ = short
    builder.__module__ = __name__ + ("." + op_name.rsplit(".", 1)[0] if "." in op_name else "")
    builder.__doc__ = _docstring(op_name, args, variadic, attrs, doc)
    builder.__signature__ = _signature(args, variadic, attrs)
    return builder


def _namespace(path: _List[str]) -> _types.ModuleType:
    module = _sys.modules[__name__]
    for depth, part in enumerate(path):
        child = getattr(module, part, None)
        if not isinstance(child, _types.ModuleType):
            full = ".".join([__name__] + path[:depth + 1])
            child = _types.ModuleType(full, f"kiln ops named {'.'.join(path[:depth + 1])}.*")
            setattr(module, part, child)
            _sys.modules[full] = child
        module = child
    return module


def list_ops() -> _List[str]:
    """The names of every registered op."""
    return sorted(_builders)


def get(op_name: str) -> _Callable[..., _Expr]:
    """The builder of the op of that name (``get("nn.conv2d")``)."""
    if op_name not in _builders:
        raise _KilnError(f"unknown op '{op_name}'")
    return _builders[op_name]


def _register_all() -> None:
    for op_name, args, variadic, attrs, doc in _core.op_schemas():
        builder = _make_builder(op_name, args, variadic, attrs, doc)
        _builders[op_name] = builder
        *path, short = op_name.split(".")
        namespace = _namespace(path)
        # A Python keyword (e.g. "if") stays reachable through get().
        setattr(namespace, short, builder)


_register_all()
