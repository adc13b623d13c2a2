#!/usr/bin/python3
"""Exports real architectures with random weights to ONNX, with one input set each.

usage: export_models.py OUT_DIR [NAME...]
Writes OUT_DIR/<name>/model.onnx and OUT_DIR/<name>/inputs/<input>.npy. The weights are
random (seeded), since the point is the architecture, not accuracy.
"""
import os
import sys

import numpy as np
import torch
import torchvision


class TokenTransformer(torch.nn.Module):
    """A token embedding, positional embedding and a TransformerEncoder (2 small layers by default)."""

    def __init__(self, vocab=1000, d_model=64, heads=4, layers=2, seq=16, feedforward=128, activation="relu"):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d_model)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, d_model) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=feedforward, dropout=0.0,
                                                 activation=activation, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d_model, 10)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        return self.head(self.encoder(x))


def image_model(factory):
    return lambda: (factory(weights=None).eval(), {"input": np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)})


MODELS = {
    "resnet18": image_model(torchvision.models.resnet18),
    "mobilenet_v2": image_model(torchvision.models.mobilenet_v2),
    "efficientnet_b0": image_model(torchvision.models.efficientnet_b0),
    "regnet_y_400mf": image_model(torchvision.models.regnet_y_400mf),
    "transformer": lambda: (TokenTransformer().eval(), {"tokens": np.random.default_rng(0).integers(0, 1000, (1, 16)).astype(np.int64)}),
}


def export(name, out_dir):
    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    write_export(model, inputs, os.path.join(out_dir, name))


def write_export(model, inputs, folder):
    """Writes folder/model.onnx (one output, "output") and folder/inputs/<name>.npy."""
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    # Gradients stay enabled: under no_grad, TransformerEncoderLayer takes a fused fast
    # path that has no ONNX export.
    torch.onnx.export(model, args, os.path.join(folder, "model.onnx"), input_names=list(inputs),
                      output_names=["output"], opset_version=14, do_constant_folding=True)
    for key, value in inputs.items():
        np.save(os.path.join(folder, "inputs", key + ".npy"), value)


def main():
    out_dir = sys.argv[1]
    for name in sys.argv[2:] or MODELS:
        export(name, out_dir)


if __name__ == "__main__":
    main()
