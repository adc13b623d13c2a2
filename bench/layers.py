#!/usr/bin/python3
"""Where a model's time goes, layer by layer, in kiln and in ONNX Runtime.

usage: bench/layers.py NAME [--rounds N] [--threads N] [--repeat N] [--kiln BINARY] [--cache DIR]

NAME is a model of bench/models.py (exported into the cache if needed), or a folder laid out as
the cache's are (model.onnx and inputs/*.npy), such as a one-layer model written to study a shape. kiln compiles it with an
empty kernel cache; then, ROUNDS times, `kiln bench --profile` and `tools/ort/run.js --bench
--profile` (ONNX Runtime's profiler) run one after the other. Convolutions, dense layers and pools
are matched across the two engines by their shapes, not by names, since each engine fuses and
renames differently: a layer is (kind, input channels, input height, output channels, window,
output height), with channel counts of 8 and more rounded up to whole 16-channel blocks (kiln's
and ONNX Runtime's NCHWc layouts both pad them). Layers of the same shape are summed. Prints a
table of milliseconds per run (median over rounds), kiln minus ORT first: the layers kiln loses
on. ONNX Runtime's profiler adds a few microseconds to each of its nodes, and both profiles time
each kernel apart, so the totals read high; the per-layer differences are what this is for.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
KILN_ROW = re.compile(r"^\s*([0-9.]+)\s+\S+\s+(\d+)\s+\S+\s+\S+\s+(\S+)$")


def blocks16(channels):
    return channels if channels < 8 else (channels + 15) // 16 * 16


def conv_layer(name, data, weight, out):
    """The layer key of a kiln convolution from its argument shapes (NCHW or NCHW{x}c data)."""
    if len(data) == 5:
        channels, height = data[1] * data[4], data[2]
        out_channels, out_height = out[1] * out[4], out[2]
    else:
        channels, height, out_channels, out_height = data[1], data[2], out[1], out[2]
    if "winograd" in name:  # F(4x4, 3x3) of a 3x3 window: its weights are transformed
        return ("conv", blocks16(channels), height, blocks16(out_channels), 3, out_height)
    per_group = weight[1] * weight[4] if len(weight) == 6 else weight[1]
    kind = "depthwise" if per_group == 1 and channels > 1 else "conv" if per_group == channels else "grouped"
    return (kind, blocks16(channels), height, blocks16(out_channels), weight[2], out_height)


def kiln_layers(artifact):
    """Kernel name -> layer key, from the artifact's graph.json (a kernel serves one shape)."""
    graph = json.loads((artifact / "graph.json").read_text())
    shapes, rows = graph["attrs"]["shape"][1], graph["node_row_ptr"]
    layers = {}
    for i, node in enumerate(graph["nodes"]):
        if node["op"] == "null":
            continue
        name = node.get("attrs", {}).get("func_name", node["name"])
        args = [shapes[rows[src] + index] for src, index, *_ in node["inputs"]]
        out = shapes[rows[i]]
        if "conv2d" in name and len(args) > 1:
            layers[name] = conv_layer(name, args[0], args[1], out)
        elif "dense" in name and len(args) > 1:
            layers[name] = ("dense", args[0][-1], out[-1])
        elif "pool2d" in name:
            kind = "global_pool" if "global" in name else "pool"
            channels = args[0][1] * (args[0][4] if len(args[0]) == 5 else 1)
            layers[name] = (kind, blocks16(channels), args[0][2], out[2])
    return layers


def kiln_profile(text, layers):
    times = {}
    for line in text.splitlines():
        match = KILN_ROW.match(line)
        if match and match.group(3).startswith("fused"):
            key = layers.get(match.group(3), match.group(3))
            times[key] = times.get(key, 0.0) + float(match.group(1))
    return times


def ort_layer(op, inputs, outputs):
    """The layer key of an ONNX Runtime node from its profiled shapes, None to keep its name."""
    shape = lambda t: next(iter(t.values()))  # noqa: E731
    if op in ("Conv", "FusedConv") and len(inputs) > 1:
        data, weight, out = shape(inputs[0]), shape(inputs[1]), shape(outputs[0])
        per_group, channels = weight[1], data[1]
        kind = "depthwise" if per_group == 1 and channels > 1 else "conv" if per_group == channels else "grouped"
        return (kind, blocks16(channels), data[2], blocks16(out[1]), weight[2], out[2])
    if op in ("Gemm", "MatMul", "FusedGemm") and len(shape(inputs[0])) == 2:
        return ("dense", shape(inputs[0])[-1], shape(outputs[0])[-1])
    if op in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
        data, out = shape(inputs[0]), shape(outputs[0])
        return ("global_pool" if op.startswith("Global") else "pool", blocks16(data[1]), data[2], out[2])
    return None


def ort_profile(trace):
    """Median time per run of every node, summed per layer (a run's nodes each appear once)."""
    per_node = {}
    for event in json.loads(trace.read_text()):
        if event.get("cat") != "Node" or not event["name"].endswith("_kernel_time"):
            continue
        args = event["args"]
        key = ort_layer(args["op_name"], args.get("input_type_shape", []), args.get("output_type_shape", []))
        entry = per_node.setdefault(event["name"], [key or args["op_name"], []])
        entry[1].append(event["dur"] / 1000.0)
    times = {}
    for key, durations in per_node.values():
        times[key] = times.get(key, 0.0) + statistics.median(durations)
    return times


def label(key):
    if isinstance(key, str):
        return key
    kind, *dims = key
    if kind in ("conv", "depthwise", "grouped"):
        c, h, o, k, oh = dims
        return f"{kind} {k}x{k} {c}->{o} {h}->{oh}"
    if kind == "dense":
        return f"dense {dims[0]}->{dims[1]}"
    return f"{kind} {dims[0]}ch {dims[1]}->{dims[2]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--kiln", default=str(ROOT / "build/release/kiln"))
    default_cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "kiln/bench-models"
    parser.add_argument("--cache", default=str(default_cache))
    args = parser.parse_args()

    model = pathlib.Path(args.name)
    if not (model / "model.onnx").is_file():
        subprocess.run([sys.executable, str(ROOT / "bench/models.py"), args.cache, args.name], check=True,
                       stdout=subprocess.DEVNULL)
        model = pathlib.Path(args.cache) / args.name
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        artifact = work / "model.kiln"
        env = dict(os.environ, KILN_CACHE_DIR=str(work / "kernels"))
        subprocess.run([args.kiln, "compile", str(model / "model.onnx"), "-o", str(artifact)], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        layers = kiln_layers(artifact)
        kiln_rounds, ort_rounds = [], []
        for _ in range(args.rounds):
            common = ["--inputs", str(model / "inputs"), "--threads", str(args.threads), "--repeat", str(args.repeat)]
            out = subprocess.run([args.kiln, "bench", str(artifact), "--profile", *common], check=True,
                                 capture_output=True, text=True).stdout
            kiln_rounds.append(kiln_profile(out, layers))
            trace = work / "ort.json"
            subprocess.run(["node", str(ROOT / "tools/ort/run.js"), str(model / "model.onnx"), "--bench", "--profile",
                            str(trace), *common], check=True, stdout=subprocess.DEVNULL)
            ort_rounds.append(ort_profile(trace))

    keys = set().union(*kiln_rounds, *ort_rounds)
    median = lambda rounds, k: statistics.median(r.get(k, 0.0) for r in rounds)  # noqa: E731
    rows = sorted(((median(kiln_rounds, k), median(ort_rounds, k), k) for k in keys),
                  key=lambda row: row[1] - row[0])
    print(f"{args.name}, {args.threads} thread(s), ms per run, median over {args.rounds} round(s)\n")
    print("| layer | kiln ms | ORT ms | kiln - ORT |")
    print("|---|---:|---:|---:|")
    for kiln_ms, ort_ms, key in rows:
        print(f"| {label(key)} | {kiln_ms:.3f} | {ort_ms:.3f} | {kiln_ms - ort_ms:+.3f} |")
    total_kiln, total_ort = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print(f"| total | {total_kiln:.3f} | {total_ort:.3f} | {total_kiln - total_ort:+.3f} |")


if __name__ == "__main__":
    main()
