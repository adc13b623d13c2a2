"""kiln.graph_executor: running a compiled graph (tvm.contrib.graph_executor)."""

from __future__ import annotations

import statistics
import time
from typing import Any, List, Optional, Union

from . import _core
from ._core import KilnError
from .runtime import ArrayLike, NDArray, from_npy, to_npy


def _index(index: Any, count: int, what: str) -> int:
    if not isinstance(index, int) or not 0 <= index < count:
        raise KilnError(f"{what} index {index!r} out of range: the model has {count} {what}s")
    return index


class BenchmarkResult:
    """Timings of repeated runs, in seconds (tvm.runtime.profiling.BenchmarkResult)."""

    def __init__(self, results: List[float]):
        self.results = results
        self.mean = statistics.fmean(results)
        self.median = statistics.median(results)
        self.min = min(results)
        self.max = max(results)
        self.std = statistics.pstdev(results)

    def __repr__(self) -> str:
        ms = 1e3
        return (f"Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                f"{self.mean * ms:10.4f}   {self.median * ms:10.4f}   {self.max * ms:10.4f}   "
                f"{self.min * ms:10.4f}   {self.std * ms:10.4f}")


class GraphModule:
    """Runs a compiled graph: ``GraphModule(lib["default"](kiln.cpu(0)))``.

    One thread at a time; the GIL is released during :meth:`run`.
    """

    def __init__(self, module: _core.Executor):
        if not isinstance(module, _core.Executor):
            raise KilnError("GraphModule takes lib['default'](kiln.cpu(0)), the executor of a built or loaded module")
        self.module = module

    def set_input(self, key: Union[int, str, None] = None, value: Optional[ArrayLike] = None, **params: ArrayLike) -> None:
        """Sets an input by name or index (and any given as keywords). A wrong shape or dtype is a KilnError;
        values are not converted."""
        if key is not None:
            if value is None:
                raise KilnError(f"set_input: no value given for input {key!r}")
            index = self.get_input_index(key) if isinstance(key, str) else _index(key, self.get_num_inputs(), "input")
            self.module.set_input(index, to_npy(value, f"input {key!r}"))
        for name, v in params.items():
            self.module.set_input(self.get_input_index(name), to_npy(v, f"input '{name}'"))

    def run(self, **inputs: ArrayLike) -> None:
        """Runs the graph (after setting any inputs given as keywords)."""
        if inputs:
            self.set_input(**inputs)
        self.module.run()

    def get_output(self, index: int, out: Any = None) -> NDArray:
        """A copy of output ``index`` of the last run."""
        if out is not None:
            raise KilnError("get_output: writing into `out` is not supported; use the returned array")
        return NDArray(from_npy(self.module.get_output(_index(index, self.get_num_outputs(), "output"))))

    def get_num_outputs(self) -> int:
        return self.module.num_outputs()

    def get_num_inputs(self) -> int:
        return self.module.num_inputs()

    def get_input_index(self, name: str) -> int:
        """The index of the named input; an unknown name is a KilnError listing the inputs."""
        return self.module.input_index(str(name))

    def benchmark(self, device: Any = None, func_name: str = "run", repeat: int = 5, number: int = 5,
                  min_repeat_ms: Optional[float] = None, end_to_end: bool = False) -> BenchmarkResult:
        """Times ``run()``: ``repeat`` measurements, each the mean of ``number`` runs (the first
        measurement repeated until it takes ``min_repeat_ms``, when given). Inputs must be set."""
        if func_name != "run" or end_to_end:
            raise KilnError("benchmark: only func_name='run' without end_to_end is supported")
        if repeat < 1 or number < 1:
            raise KilnError(f"benchmark: repeat and number must be positive, got {repeat} and {number}")
        self.module.run()  # warm-up, and inputs left unset fail before timing
        results = []
        for _ in range(repeat):
            runs = number
            while True:
                start = time.perf_counter()
                for _ in range(runs):
                    self.module.run()
                elapsed = time.perf_counter() - start
                if not min_repeat_ms or elapsed * 1e3 >= min_repeat_ms or runs >= 1 << 20:
                    break
                runs *= 2
            results.append(elapsed / runs)
        return BenchmarkResult(results)
