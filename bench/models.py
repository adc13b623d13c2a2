#!/usr/bin/python3
"""Exports the benchmark models of bench/run.sh to ONNX, with one input set each.

usage: models.py OUT_DIR [NAME...]      (default: every model; --list prints the names)
Writes OUT_DIR/<name>/model.onnx and OUT_DIR/<name>/inputs/<input>.npy, as
tests/realmodels/export_models.py does (whose helpers it uses), with random weights
(torch seed 0) and random inputs (numpy seed 0). OUT_DIR doubles as a cache: a model whose
folder holds a stamp equal to the model's key (library versions, the export code, the module's
structure, weights and inputs) is not exported again, since ViT-B/16 and ConvNeXt-T take a while.
"""
import hashlib
import inspect
import os
import sys

import numpy as np
import onnx
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "realmodels"))
from export_models import TokenTransformer, image_model, write_export  # noqa: E402  (shared with the real-model tests)


class Recurrent(torch.nn.Module):
    """An LSTM or GRU over a (seq, batch, features) input; returns the output sequence only."""

    def __init__(self, cell, **kwargs):
        super().__init__()
        self.rnn = cell(**kwargs)

    def forward(self, x):
        return self.rnn(x)[0]


def mlp(width=1024, layers=3):
    return torch.nn.Sequential(*[m for _ in range(layers) for m in (torch.nn.Linear(width, width), torch.nn.ReLU())])


def tokens(vocab, seq):
    return {"tokens": np.random.default_rng(0).integers(0, vocab, (1, seq)).astype(np.int64)}


def floats(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


class UNet(torch.nn.Module):
    """A 4-level U-Net for segmentation: two 3x3 conv + batch norm + ReLU per level, max-pool down,
    bilinear resize up (ONNX Resize), skip connections by concatenation, a 1x1 conv to classes."""

    def __init__(self, channels=(32, 64, 128, 256), classes=8):
        super().__init__()

        def block(c_in, c_out):
            return torch.nn.Sequential(*[m for i in range(2) for m in (
                torch.nn.Conv2d(c_in if i == 0 else c_out, c_out, 3, padding=1, bias=False),
                torch.nn.BatchNorm2d(c_out), torch.nn.ReLU())])

        self.down = torch.nn.ModuleList(block(c_in, c_out) for c_in, c_out in zip((3,) + channels[:-1], channels))
        self.up = torch.nn.ModuleList(block(c_big + c_small, c_small)
                                      for c_big, c_small in zip(channels[:0:-1], channels[-2::-1]))
        self.head = torch.nn.Conv2d(channels[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, level in enumerate(self.down):
            x = level(x if i == 0 else torch.nn.functional.max_pool2d(x, 2))
            skips.append(x)
        for level, skip in zip(self.up, skips[-2::-1]):
            x = torch.nn.functional.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
            x = level(torch.cat([x, skip], dim=1))
        return self.head(x)


def image(size):
    return {"input": floats(1, 3, size, size)}


def vit_b_16():
    """torchvision zero-initialises ViT's classifier head, so every output would be 0 and the check
    against ONNX Runtime empty; a random head makes the outputs depend on the whole network."""
    model, inputs = image_model(torchvision.models.vit_b_16)()
    torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    torch.nn.init.normal_(model.heads.head.bias, std=0.02)
    return model, inputs


def recurrent(cell, **kwargs):
    return lambda: (Recurrent(cell, input_size=256, hidden_size=256, **kwargs).eval(), {"input": floats(32, 1, 256)})


MODELS = {
    "vit_b_16": vit_b_16,
    # BERT-base size: hidden 768, 12 heads, 12 layers, feed-forward 3072 with GELU, sequence 128.
    "bert_encoder": lambda: (TokenTransformer(vocab=30522, d_model=768, heads=12, layers=12, seq=128, feedforward=3072,
                                              activation="gelu").eval(), tokens(30522, 128)),
    "transformer_256": lambda: (TokenTransformer(vocab=1000, d_model=256, heads=4, layers=4, seq=64,
                                                 feedforward=1024).eval(), tokens(1000, 64)),
    "lstm_2layer": recurrent(torch.nn.LSTM, num_layers=2),
    "gru_bidir": recurrent(torch.nn.GRU, bidirectional=True),
    "mlp": lambda: (mlp().eval(), {"input": floats(32, 1024)}),
    "resnet18": image_model(torchvision.models.resnet18),
    "resnet50": image_model(torchvision.models.resnet50),
    "mobilenet_v2": image_model(torchvision.models.mobilenet_v2),
    "mobilenet_v3_small": image_model(torchvision.models.mobilenet_v3_small),
    "efficientnet_b0": image_model(torchvision.models.efficientnet_b0),
    "shufflenet_v2_x1_0": image_model(torchvision.models.shufflenet_v2_x1_0),
    "convnext_tiny": image_model(torchvision.models.convnext_tiny),
    "regnet_y_400mf": image_model(torchvision.models.regnet_y_400mf),
    "densenet121": image_model(torchvision.models.densenet121),
    "vgg11": image_model(torchvision.models.vgg11),
    "inception_v3": lambda: (torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False).eval(),
                             image(299)),
    "unet": lambda: (UNet().eval(), image(256)),
}

# Not a benchmark: one Add of two 1-element tensors, whose latency is an engine's fixed cost per call.
OVERHEAD_MODEL = "trivial_add"


def write_trivial_add(folder):
    x, y, z = (onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1]) for n in ("x", "y", "output"))
    graph = onnx.helper.make_graph([onnx.helper.make_node("Add", ["x", "y"], ["output"])], "trivial_add", [x, y], [z])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 14)])
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for name, value in (("x", 1.0), ("y", 2.0)):
        np.save(os.path.join(folder, "inputs", name + ".npy"), np.array([value], dtype=np.float32))


def cache_key(model, inputs):
    """What the export depends on; building the model is cheap next to exporting it."""
    digest = hashlib.sha256(" ".join((torch.__version__, torchvision.__version__, onnx.__version__)).encode())
    digest.update(inspect.getsource(write_export).encode() + inspect.getsource(write_trivial_add).encode())
    digest.update(repr(model).encode())
    for name, tensor in model.state_dict().items() if model is not None else ():
        digest.update(name.encode() + tensor.detach().contiguous().numpy().tobytes())
    for name, value in inputs.items():
        digest.update(name.encode() + str(value.dtype).encode() + str(value.shape).encode() + value.tobytes())
    return digest.hexdigest()


def export(name, out_dir):
    folder = os.path.join(out_dir, name)
    if name == OVERHEAD_MODEL:
        model, inputs = None, {}
    else:
        torch.manual_seed(0)
        model, inputs = MODELS[name]()
    key, stamp = cache_key(model, inputs), os.path.join(folder, "stamp")
    if os.path.exists(stamp) and open(stamp).read() == key:
        return
    if model is None:
        write_trivial_add(folder)
    else:
        write_export(model, inputs, folder)
    with open(stamp, "w") as out:
        out.write(key)


def main():
    if sys.argv[1:] == ["--list"]:
        print(" ".join(MODELS))
        return
    out_dir, names = sys.argv[1], sys.argv[2:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS and n != OVERHEAD_MODEL]
    if unknown:
        sys.exit(f"models.py: unknown model(s) {' '.join(unknown)}; known: {' '.join(MODELS)} {OVERHEAD_MODEL}")
    for name in names:
        export(name, out_dir)


if __name__ == "__main__":
    main()
