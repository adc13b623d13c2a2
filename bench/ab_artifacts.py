#!/usr/bin/python3
"""Two or more compiled artifacts of one model, run in turn in one process: which is faster?

usage: bench/ab_artifacts.py ART_A ART_B [ART...] --inputs DIR [--runs N] [--threads N]

Each ART is a folder `kiln compile` wrote (graph.json, lib.so, params.bin), for instance the same
model compiled by two kiln builds, or with two header trees (KILN_INCLUDE_DIR=... kiln compile).
All are loaded through kiln's Python runtime into one process with the same inputs (DIR/NAME.npy
per input), warmed up twice, then run RUNS times each in turn (the order reversed every other
run), so a host whose speed drifts over seconds or minutes slows all of them alike; separate
processes minutes apart (`kiln bench`) can differ by 30% on such a host. Prints each artifact's
minimum, 10th percentile and median milliseconds per run. A timing is one `run()` of the graph
executor (`GraphModule.run`), with Python's call overhead (a few microseconds) included.
"""
import argparse
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("KILN_PYTHONPATH", str(ROOT / "build" / "release" / "python")))
import kiln  # noqa: E402
from kiln import graph_executor, runtime  # noqa: E402


def load(path, inputs, threads):
    module = graph_executor.GraphModule(runtime.load_module(path)["default"](kiln.cpu(), num_threads=threads))
    for f in sorted(pathlib.Path(inputs).glob("*.npy")):
        module.set_input(f.stem, np.load(f))
    module.run()
    module.run()
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifacts", nargs="+")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if len(args.artifacts) < 2:
        parser.error("give at least two artifacts")
    modules = [load(a, args.inputs, args.threads) for a in args.artifacts]
    times = [[] for _ in modules]
    for run in range(args.runs):
        order = range(len(modules)) if run % 2 == 0 else reversed(range(len(modules)))
        for k in order:
            start = time.perf_counter()
            modules[k].run()
            times[k].append((time.perf_counter() - start) * 1e3)
    width = max(len(a) for a in args.artifacts)
    for name, t in zip(args.artifacts, times):
        t = np.array(t)
        print(f"{name:<{width}}  min {t.min():.3f}  p10 {np.percentile(t, 10):.3f}  median {np.median(t):.3f} ms")


if __name__ == "__main__":
    main()
