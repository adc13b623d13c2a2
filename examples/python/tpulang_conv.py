#!/usr/bin/env python3
"""TpuLang's single-conv model (the seed notes' TpuLang chapter, in kiln): init, an input
tensor, a weight, conv_v2, compile -> Conv_origin.mlir + Conv_TOP_F32_all_weight.npz; then the
same graph as a kiln module, built and run, checked against numpy.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/tpulang_conv.py [--dir OUT]
"""

import argparse
import os
import tempfile

import numpy as np

import kiln
import kiln.tpulang as tpul


def reference_conv(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """NCHW x OIHW, stride 1: the sum over input channels and taps of shifted windows."""
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, oc, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i:i + oh, j:j + ow]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    return out.astype(np.float32)


def main(out_dir: str) -> None:
    rng = np.random.default_rng(0)
    weight_data = rng.standard_normal((8, 3, 3, 3)).astype("float32")

    tpul.init("cpu")
    x = tpul.Tensor(shape=[1, 3, 16, 16], name="x", dtype="float32")
    weight = tpul.Tensor(shape=[8, 3, 3, 3], name="weight", data=weight_data)
    y = tpul.conv_v2(x, weight, stride=[1, 1], dilation=[1, 1], pad=[1, 1, 1, 1], group=1, out_name="y")
    print("output:", y)

    mlir_path, weight_path = tpul.compile("Conv", [x], [y], out_dir)
    with open(mlir_path) as f:
        mlir = f.read()
    print(mlir)
    assert os.path.basename(mlir_path) == "Conv_origin.mlir"
    assert '"top.Conv"' in mlir and '"top.Input"' in mlir and '"top.Weight"' in mlir
    np.testing.assert_array_equal(np.load(weight_path)["weight"], weight_data)

    mod, params = tpul.to_kiln([x], [y])
    tpul.deinit()
    print(mod)
    lib = kiln.build(mod, target="c", params=params)
    module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
    data = rng.standard_normal((1, 3, 16, 16)).astype("float32")
    module.set_input("x", data)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), reference_conv(data, weight_data, 1), rtol=1e-4,
                               atol=1e-4)
    print("Conv_origin.mlir written; the kiln build equals numpy's convolution")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where to write the files (default: a temporary folder)")
    args = parser.parse_args()
    if args.dir:
        main(args.dir)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(tmp)
