"""Prints a sample of ONNX backend cases that still runs every operator: walking the cases in
name order, a case is taken while one of its operators (subgraphs' included) has been seen in
fewer than PER_OP taken cases. The compiled conformance test runs this sample in CI; the full
sweep is `scripts/conformance.sh KILN compiled`.

usage: compiled_sample.py DATA_DIR CASE_LIST PER_OP   (CASE_LIST: one suite/case per line)
"""
import collections
import sys

import onnx


def op_types(graph):
    for node in graph.node:
        yield node.domain + "::" + node.op_type
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from op_types(attr.g)
            for g in attr.graphs:
                yield from op_types(g)


def main():
    data, case_list, per_op = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(case_list) as f:
        cases = sorted(line.strip() for line in f if line.strip())
    seen = collections.Counter()
    for case in cases:
        model = onnx.load(f"{data}/{case}/model.onnx", load_external_data=False)
        ops = set(op_types(model.graph))
        if any(seen[op] < per_op for op in ops):
            print(case)
            seen.update(ops)


if __name__ == "__main__":
    main()
