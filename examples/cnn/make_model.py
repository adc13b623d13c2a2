#!/usr/bin/python3
"""Regenerates the bundled example: a small image classifier exported from PyTorch with
fixed random weights (model.onnx), one input image (inputs/input.npy) and PyTorch's own
output for it (expected/output.npy), against which kiln's result is checked."""
import os

import numpy as np
import torch
from torch import nn

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(7)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1, groups=2), nn.BatchNorm2d(32), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10), nn.Softmax(dim=1))
for m in model.modules():  # non-trivial running statistics, as a trained model has
    if isinstance(m, nn.BatchNorm2d):
        m.running_mean.uniform_(-0.5, 0.5)
        m.running_var.uniform_(0.5, 2.0)
model.eval()
x = torch.from_numpy(np.random.default_rng(7).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32))
torch.onnx.export(model, x, os.path.join(here, "model.onnx"), input_names=["input"], output_names=["probs"],
                  opset_version=13)
os.makedirs(os.path.join(here, "inputs"), exist_ok=True)
os.makedirs(os.path.join(here, "expected"), exist_ok=True)
np.save(os.path.join(here, "inputs", "input.npy"), x.numpy())
with torch.no_grad():
    np.save(os.path.join(here, "expected", "probs.npy"), model(x).numpy())
