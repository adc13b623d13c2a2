"""kiln.ir: the IR module, as tvm.ir.IRModule."""

from __future__ import annotations

from typing import List

from . import _core


class IRModule:
    """The global functions of a program, entry ``@main``; ``str(mod)`` is its Relay text.

    A module is immutable: passes return a new one.
    """

    def __init__(self, core_module: _core.Module):
        self._module = core_module

    @staticmethod
    def from_text(text: str, source: str = "<text>") -> "IRModule":
        """Parses Relay text as the printer writes it (``def @main(...) { ... }``) and infers its types.

        Errors are :class:`kiln.KilnError` naming ``source:line:column``.
        """
        return IRModule(_core.Module.parse(text, source))

    parse = from_text

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
        """The module's Relay text (same as ``str(mod)``)."""
        return str(self._module)

    def __str__(self) -> str:
        return str(self._module)

    def __repr__(self) -> str:
        return f"IRModule(functions={self.functions})"


def parse(text: str, source: str = "<text>") -> IRModule:
    """Parses a module's Relay text (tvm.parser.parse)."""
    return IRModule.from_text(text, source)
