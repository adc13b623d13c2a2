"""kiln.ir: expressions, functions and modules of kiln's IR, as tvm.relay's builders and tvm.IRModule.

    x = kiln.ir.var("x", shape=(1, 10))
    f = kiln.ir.Function([x], kiln.op.nn.relu(x))
    mod = kiln.ir.IRModule.from_expr(f)
    print(mod)          # def @main(%x: Tensor[(1, 10), float32]) { nn.relu(%x) }

Expressions are immutable and print (``str``) as IR text; ops are called through :mod:`kiln.op`.
"""

from __future__ import annotations

import typing
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core
from ._core import KilnError
from .runtime import NDArray, from_npy, to_npy


class Expr:
    """An expression of the IR (a variable, constant, call, tuple, function, ...).

    ``e[i]`` is the tuple field i (TupleGetItem); a tuple-typed expression unpacks
    (``out, mean, var = kiln.op.nn.batch_norm(...)``); ``a + b``, ``a * b``, ``a - b``, ``a / b``
    call kiln.op's add / multiply / subtract / divide; calling a GlobalVar or Function calls it.
    """

    def __init__(self, core: _core.Expr):
        self._expr = core

    @property
    def kind(self) -> str:
        """The node kind: Var, GlobalVar, Constant, Call, Tuple, TupleGetItem, Function, Let, If."""
        return self._expr.kind

    @property
    def name_hint(self) -> str:
        """A variable's or global's name, a call's op name, else ""."""
        return self._expr.name()

    @property
    def op_name(self) -> str:
        return self._expr.name() if self.kind == "Call" else ""

    @property
    def checked_type(self) -> str:
        """The inferred type as IR text, e.g. ``Tensor[(1, 10), float32]``; a KilnError when it does not type."""
        return self._expr.type()

    @property
    def attrs(self) -> Dict[str, Any]:
        """A call's or function's attributes as written."""
        return dict(self._expr.attrs())

    @property
    def children(self) -> List["Expr"]:
        """The direct sub-expressions, in evaluation order."""
        return [Expr(c) for c in self._expr.children()]

    def same_as(self, other: "Expr") -> bool:
        return isinstance(other, Expr) and self._expr.same_as(other._expr)

    def structural_equal(self, other: "Expr") -> bool:
        return isinstance(other, Expr) and self._expr.structural_equal(other._expr)

    def with_attr(self, name: str, value: Any) -> "Expr":
        """A function with one attribute set (``fn.with_attr("Inline", 1)``)."""
        return Expr(self._expr.with_attrs({name: value}))

    def __getitem__(self, index: int) -> "Expr":
        if not isinstance(index, int):
            raise KilnError(f"a tuple index must be an int, not {type(index).__name__}")
        return TupleGetItem(self, index)

    def __len__(self) -> int:
        return self._expr.tuple_size()

    def __bool__(self) -> bool:
        return True  # an expression is a value, whatever its length (len() types it)

    def __iter__(self) -> Iterator["Expr"]:
        return (self[i] for i in range(len(self)))

    def __call__(self, *args: Any) -> "Expr":
        return Expr(_core.call(self._expr, [as_expr(a)._expr for a in args]))

    def _binary(self, op: str, other: Any, reverse: bool = False) -> "Expr":
        from . import op as ops

        lhs, rhs = (other, self) if reverse else (self, other)
        return getattr(ops, op)(lhs, rhs)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, True)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other, True)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __rtruediv__(self, other):
        return self._binary("divide", other, True)

    def __str__(self) -> str:
        return str(self._expr)

    def __repr__(self) -> str:
        return f"kiln.ir.Expr({self.kind}: {str(self).splitlines()[0][:80]})"


def as_expr(value: Any, dtype: Optional[str] = None) -> Expr:
    """An Expr as is; a numpy array, NDArray or Python scalar as a constant."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (np.ndarray, NDArray, np.generic, int, float, bool)):
        return const(value, dtype)
    raise KilnError(f"expected a kiln.ir.Expr or an array, not {type(value).__name__}")


def var(name: str, shape: Optional[Sequence[int]] = None, dtype: str = "float32") -> Expr:
    """A variable (a function parameter): ``var("x", shape=(1, 3, 224, 224))``; untyped without a shape."""
    return Expr(_core.var(name, None if shape is None else [int(d) for d in shape], dtype))


def const(value: Any, dtype: Optional[str] = None) -> Expr:
    """A constant from a numpy array, NDArray or scalar; Python floats become float32 (as relay.const)."""
    if isinstance(value, NDArray):
        value = value.numpy()
    array = np.asarray(value)
    if dtype is not None:
        array = array.astype(dtype)
    elif array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)
    elif array.dtype == np.int64 and not isinstance(value, np.ndarray):
        array = array.astype(np.int32)
    return Expr(_core.constant(to_npy(array, "constant")))


def constant_value(e: Expr) -> np.ndarray:
    """The array of a constant expression."""
    return from_npy(_core.constant_value(e._expr))


def GlobalVar(name: str) -> Expr:  # noqa: N802 (TVM's name)
    """A reference to the module's function ``@name``; call it like a function."""
    return Expr(_core.global_var(name))


def Function(params: Sequence[Expr], body: Any, attrs: Optional[Mapping[str, Any]] = None) -> Expr:  # noqa: N802
    """A function of the given variables (relay.Function); ``attrs`` e.g. ``{"Inline": 1}``."""
    return Expr(_core.function([p._expr for p in params], as_expr(body)._expr, dict(attrs or {})))


def Tuple(fields: Sequence[Any]) -> Expr:  # noqa: N802
    """A tuple of expressions (relay.Tuple)."""
    return Expr(_core.tuple([as_expr(f)._expr for f in fields]))


def TupleGetItem(tuple_value: Expr, index: int) -> Expr:  # noqa: N802
    """Field ``index`` of a tuple (relay.TupleGetItem)."""
    return Expr(_core.tuple_get_item(as_expr(tuple_value)._expr, int(index)))


def Let(variable: Expr, value: Any, body: Any) -> Expr:  # noqa: N802
    """``let %variable = value; body``."""
    return Expr(_core.let(variable._expr, as_expr(value)._expr, as_expr(body)._expr))


FunctionEntries = List[typing.Tuple[str, _core.Expr]]


class IRModule:
    """The global functions of a program, entry ``@main``; ``str(mod)`` is its IR text.

    Built empty and filled (``mod["main"] = kiln.ir.Function(...)``), from an expression
    (:meth:`from_expr`), parsed (:meth:`from_text`) or imported (kiln.frontend). Adding a
    function infers the module's types: a type error is a :class:`kiln.KilnError` then.
    Passes return a new module.
    """

    def __init__(self, functions: Union[None, Mapping[Any, Expr], _core.Module] = None):
        if isinstance(functions, _core.Module):
            self._module = functions
            return
        self._module = _core.module_from_functions([])
        for name, fn in (functions or {}).items():
            self[name] = fn

    @staticmethod
    def from_expr(expr: Expr) -> "IRModule":
        """A module whose ``@main`` is ``expr`` (a function, or an expression over its free variables)."""
        return IRModule({"main": as_expr(expr)})

    @staticmethod
    def from_text(text: str, source: str = "<text>") -> "IRModule":
        """Parses IR text as the printer writes it (``def @main(...) { ... }``) and infers its types.

        Errors are :class:`kiln.KilnError` naming ``source:line:column``.
        """
        return IRModule(_core.Module.parse(text, source))

    parse = from_text

    def _entries(self) -> FunctionEntries:
        return [(name, _core.module_function(self._module, name)) for name in self.functions]

    def __setitem__(self, name: Union[str, Expr], fn: Expr) -> None:
        name = name.name_hint if isinstance(name, Expr) else str(name)
        entries = self._entries()
        replaced = [(n, as_expr(fn)._expr if n == name else f) for n, f in entries]
        if name not in self.functions:
            replaced.append((name, as_expr(fn)._expr))
        self._module = _core.module_from_functions(replaced)

    def __getitem__(self, name: Union[str, Expr]) -> Expr:
        name = name.name_hint if isinstance(name, Expr) else str(name)
        return Expr(_core.module_function(self._module, name))

    def __contains__(self, name: Union[str, Expr]) -> bool:
        name = name.name_hint if isinstance(name, Expr) else str(name)
        return name in self.functions

    def get_global_vars(self) -> List[Expr]:
        return [GlobalVar(name) for name in self.functions]

    def structural_equal(self, other: "IRModule") -> bool:
        return isinstance(other, IRModule) and _core.module_structural_equal(self._module, other._module)

    @property
    def input_names(self) -> List[str]:
        """The names of ``@main``'s parameters, in order (real inputs, then weights when not frozen)."""
        return list(self._module.input_names)

    @property
    def output_names(self) -> List[str]:
        """The names of ``@main``'s outputs (the ONNX graph outputs, or ``output_N``)."""
        return list(self._module.output_names)

    @property
    def functions(self) -> List[str]:
        """The names of the global functions, in order."""
        return list(self._module.function_names())

    def astext(self) -> str:
        """The module's IR text (same as ``str(mod)``)."""
        return str(self._module)

    def __str__(self) -> str:
        return str(self._module)

    def __repr__(self) -> str:
        return f"IRModule(functions={self.functions})"


def parse(text: str, source: str = "<text>") -> IRModule:
    """Parses a module's IR text (tvm.parser.parse)."""
    return IRModule.from_text(text, source)


def evaluate(mod: Union[IRModule, Expr], *args: Any, entry: str = "main") -> List[np.ndarray]:
    """Runs ``@entry`` with kiln's reference interpreter (relay.create_executor("debug")) on numpy
    arguments, one per parameter; returns the outputs (a tuple's fields flattened)."""
    if isinstance(mod, Expr):
        mod = IRModule.from_expr(mod)
    arrays = [(f"#{i}", to_npy(a.numpy() if isinstance(a, NDArray) else np.asarray(a), f"argument {i}"))
              for i, a in enumerate(args)]
    return [from_npy(out) for out in _core.interpret(mod._module, entry, arrays)]


def op_counts(mod: Union[IRModule, Expr]) -> Dict[str, int]:
    """How many calls of each op the module holds (fused functions' bodies included), and under
    ``"fn(Primitive)"`` how many fused functions: a quick check of what a pass did."""
    if isinstance(mod, Expr):
        mod = IRModule.from_expr(mod)
    return dict(_core.op_counts(mod._module))
