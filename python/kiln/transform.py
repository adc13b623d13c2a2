"""kiln.transform: passes and the pass context, as tvm.transform and tvm.relay.transform.

Every pass registered in kiln (``kiln print --pass NAME`` names) is a function here returning a
:class:`Pass`, e.g. ``kiln.transform.FoldConstant()(mod)``; :func:`get_pass` finds one by name.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from . import _core
from .ir import IRModule

OptionValues = Dict[str, Dict[str, Any]]


def _split_config(config: Optional[Mapping[str, Any]]) -> OptionValues:
    """{"FuseOps": {"fuse": False}} or TVM's flat {"relay.FuseOps.fuse": False} -> per-pass options."""
    options: OptionValues = {}
    for key, value in (config or {}).items():
        if isinstance(value, Mapping):
            options.setdefault(str(key), {}).update(value)
            continue
        parts = str(key).split(".")
        if parts[0] == "relay":
            parts = parts[1:]
        if len(parts) != 2:
            raise _core.KilnError(f"pass option '{key}': expected PASS.OPTION (e.g. 'FuseOps.fuse') or a dict per pass")
        options.setdefault(parts[0], {})[parts[1]] = value
    return options


class PassContext:
    """The opt level, required and disabled passes and per-pass options that passes and
    :func:`kiln.build` run under, entered with ``with``.

    opt_level: a pipeline (Sequential, build) runs the passes registered at this level or lower.
    required_pass / disabled_pass: pass names run whatever their level / never run.
    config (or options): per-pass options, ``{"FuseOps": {"fuse": False}}`` or
        ``{"FuseOps.fuse": False}``.
    Unknown pass names are :class:`kiln.KilnError` listing the known ones.
    """

    _local = threading.local()  # each thread its own stack of entered contexts

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Optional[Iterable[str]] = None,
        disabled_pass: Optional[Iterable[str]] = None,
        config: Optional[Mapping[str, Any]] = None,
        options: Optional[Mapping[str, Any]] = None,
    ):
        self.opt_level = int(opt_level)
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])
        self.config = _split_config(config)
        for pass_name, values in _split_config(options).items():
            self.config.setdefault(pass_name, {}).update(values)
        self._core = self._make()  # checks the names now

    def _make(self, extra: Optional[OptionValues] = None) -> _core.PassContext:
        config = {name: dict(values) for name, values in self.config.items()}
        for name, values in (extra or {}).items():
            config.setdefault(name, {}).update(values)
        return _core.PassContext(self.opt_level, self.required_pass, self.disabled_pass, config)

    @staticmethod
    def _stack() -> List["PassContext"]:
        if not hasattr(PassContext._local, "stack"):
            PassContext._local.stack = []
        return PassContext._local.stack

    def __enter__(self) -> "PassContext":
        PassContext._stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        PassContext._stack().remove(self)

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered context, or a default one (opt_level 2)."""
        return PassContext.entered() or PassContext()

    @staticmethod
    def entered() -> Optional["PassContext"]:
        """The innermost entered context, or None outside any ``with``."""
        stack = PassContext._stack()
        return stack[-1] if stack else None

    def __repr__(self) -> str:
        return (f"PassContext(opt_level={self.opt_level}, required_pass={self.required_pass}, "
                f"disabled_pass={self.disabled_pass}, config={self.config})")


class Pass:
    """A module-to-module transformation; calling it on an IRModule returns the new module.

    Called directly, a pass runs whatever its opt level, with the options of the current
    PassContext plus those given here (``FuseOps(fuse=False)``).
    """

    def __init__(self, name: str, **options: Any):
        _core.check_pass(name)
        self.name = name
        self.options = options

    @property
    def pass_names(self) -> List[str]:
        return [self.name]

    def _extra_options(self) -> OptionValues:
        return {self.name: dict(self.options)} if self.options else {}

    def __call__(self, mod: IRModule) -> IRModule:
        _check_module(mod)
        ctx = PassContext.current()._make(self._extra_options())
        return IRModule(_core.run_passes(mod._module, [self.name], ctx, False))

    def __repr__(self) -> str:
        return f"kiln.transform.{self.name}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


class Sequential(Pass):
    """A pipeline of passes (tvm.transform.Sequential): under the current PassContext, passes
    above its opt level or disabled are skipped, and a pass's required passes run first.
    """

    def __init__(self, passes: Sequence[Pass], name: str = "sequential"):
        self.name = name
        self.passes = list(passes)
        for p in self.passes:
            if not isinstance(p, Pass):
                raise _core.KilnError(f"Sequential takes kiln.transform passes, not {type(p).__name__}")

    @property
    def pass_names(self) -> List[str]:
        return [name for p in self.passes for name in p.pass_names]

    def _extra_options(self) -> OptionValues:
        options: OptionValues = {}
        for p in self.passes:
            for name, values in p._extra_options().items():
                options.setdefault(name, {}).update(values)
        return options

    def __call__(self, mod: IRModule) -> IRModule:
        _check_module(mod)
        ctx = PassContext.current()._make(self._extra_options())
        return IRModule(_core.run_passes(mod._module, self.pass_names, ctx, True))

    def __repr__(self) -> str:
        return f"kiln.transform.Sequential({self.passes!r})"


def _check_module(mod: Any) -> None:
    if not isinstance(mod, IRModule):
        raise _core.KilnError(f"a pass runs on a kiln.ir.IRModule, not {type(mod).__name__}")


def get_pass(name: str, **options: Any) -> Pass:
    """The registered pass of that name; an unknown name is a KilnError listing the passes."""
    return Pass(name, **options)


def list_passes() -> List[str]:
    """The names of every registered pass."""
    return list(_core.pass_names())


def _pass_factory(name: str):
    def factory(**options: Any) -> Pass:
        return Pass(name, **options)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"The {name} pass; options given here (keyword arguments) are its PassContext options. "
                       f"Call the result on an IRModule.")
    return factory


for _name in _core.pass_names():
    setattr(sys.modules[__name__], _name, _pass_factory(_name))
del _name
