#!/usr/bin/env python3
"""The seed notes' TVM flow in kiln: an ONNX export of a torchvision model, imported with
from_onnx, built under a PassContext, run by the graph executor, exported and loaded again.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/from_onnx_build_run.py

Checks its outputs against PyTorch's and exits non-zero when they differ.
"""

import argparse
import os
import tempfile

import numpy as np
import onnx
import torch
import torchvision

import kiln


def export_resnet18(path: str, size: int) -> np.ndarray:
    """Writes a ResNet-18 (random weights: this machine has no network) and returns an input."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    data = torch.rand(1, 3, size, size)
    torch.onnx.export(model, data, path, input_names=["input.1"], output_names=["logits"], opset_version=13)
    with torch.no_grad():
        export_resnet18.expected = model(data).numpy()
    return data.numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=224)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "resnet18.onnx")
        data = export_resnet18(onnx_path, args.image_size)

        # mod, params = relay.frontend.from_onnx(onnx_model, shape_dict)
        onnx_model = onnx.load(onnx_path)
        shape_dict = {"input.1": data.shape}
        mod, params = kiln.frontend.from_onnx(onnx_model, shape_dict)
        print("\n".join(line[:120] for line in str(mod).splitlines()[:4]), "\n  ...")
        print(f"{len(params)} parameters, e.g. {next(iter(params))}: {next(iter(params.values())).shape}")

        # with tvm.transform.PassContext(opt_level=3): lib = relay.build(mod, target, params=params)
        with kiln.transform.PassContext(opt_level=3):
            lib = kiln.build(mod, target="c", params=params)
        print(f"built {lib.num_kernels} kernels")

        module = kiln.graph_executor.GraphModule(lib["default"](kiln.cpu(0)))
        module.set_input("input.1", data)
        module.run()
        logits = module.get_output(0).numpy()
        np.testing.assert_allclose(logits, export_resnet18.expected, rtol=1e-3, atol=1e-3)
        print("top-5 classes:", np.argsort(logits[0])[::-1][:5].tolist(), "(equal to PyTorch's logits)")

        # The artifact folder `kiln run` and `kiln-run-artifact` load, loaded back here.
        artifact = os.path.join(tmp, "resnet18.kiln")
        lib.export_library(artifact)
        loaded = kiln.graph_executor.GraphModule(kiln.runtime.load_module(artifact)["default"](kiln.cpu(0)))
        loaded.set_input("input.1", data)
        loaded.run()
        np.testing.assert_array_equal(loaded.get_output(0).numpy(), logits)
        print(loaded.benchmark(repeat=3, number=1))


if __name__ == "__main__":
    main()
