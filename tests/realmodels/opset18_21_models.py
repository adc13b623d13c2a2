#!/usr/bin/python3
"""Builds the test models of the ONNX operators and operator changes of opsets 18 to 21,
which libonnx-testdata (onnx 1.12, opset <= 17) does not cover. ONNX Runtime is the reference.

usage: opset18_21_models.py OUT_DIR [NAME...]
Each module in opset_cases/ defines CASES, a dict from case name to a function returning
(model, inputs) or (model, inputs, extras); the model is built with python3-onnx's helpers
at the opset that introduced the behaviour. Writes OUT_DIR/<name>/ as regression_models.py
does (model.onnx, inputs/*.npy, optional tolerance and flags files).
"""
import glob
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from regression_models import save  # noqa: E402


def load_cases():
    cases = {}
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opset_cases")
    for path in sorted(glob.glob(os.path.join(folder, "*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, build in module.CASES.items():
            if name in cases:
                raise SystemExit("case %s defined twice (%s)" % (name, path))
            cases[name] = build
    return cases


def main():
    out_dir = sys.argv[1]
    cases = load_cases()
    for name in sys.argv[2:] or sorted(cases):
        built = cases[name]()
        save(out_dir, name, *built)


if __name__ == "__main__":
    main()
