#!/usr/bin/python3
"""Builds a tiny detector head that ends in NonMaxSuppression, as torchvision-style detectors
do: a 1x1 convolution over a feature map gives 4 box coordinates and a score per anchor,
NonMaxSuppression selects boxes, and Gather picks the selected boxes and their scores. The
number of selected boxes depends on the data, so everything after NMS has a run-time shape.

usage: nms_detector_model.py OUT_DIR   (writes OUT_DIR/nms_detector/, see regression_models.save)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from regression_models import save  # noqa: E402


def build():
    rng = np.random.default_rng(14)
    anchors = 6 * 6
    weights = rng.normal(0, 0.5, (5, 8, 1, 1)).astype(np.float32)
    init = [
        numpy_helper.from_array(weights, "w"),
        numpy_helper.from_array(np.array([0, 0, 3, 3, 0], np.float32) * 2, "b"),
        numpy_helper.from_array(np.array([1, 5, anchors], np.int64), "pred_shape"),
        numpy_helper.from_array(np.array([0, 1, 2, 3], np.int64), "box_rows"),
        numpy_helper.from_array(np.array([4], np.int64), "score_row"),
        numpy_helper.from_array(np.array([8], np.int64), "max_boxes"),
        numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
        numpy_helper.from_array(np.array([0.5], np.float32), "threshold"),
        numpy_helper.from_array(np.array(2, np.int64), "box_column"),
    ]
    nodes = [
        helper.make_node("Conv", ["features", "w", "b"], ["pred"]),
        helper.make_node("Reshape", ["pred", "pred_shape"], ["flat"]),  # (1, 5, anchors)
        helper.make_node("Gather", ["flat", "box_rows"], ["box_cols"], axis=1),  # (1, 4, anchors)
        helper.make_node("Transpose", ["box_cols"], ["boxes"], perm=[0, 2, 1]),  # (1, anchors, 4)
        helper.make_node("Gather", ["flat", "score_row"], ["logits"], axis=1),  # (1, 1, anchors)
        helper.make_node("Sigmoid", ["logits"], ["scores"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_boxes", "iou", "threshold"], ["selected"],
                         center_point_box=1),
        helper.make_node("Gather", ["selected", "box_column"], ["box_index"], axis=1),  # (n,)
        helper.make_node("Squeeze", ["boxes"], ["all_boxes"], axes=[0]),
        helper.make_node("Gather", ["all_boxes", "box_index"], ["picked"], axis=0),  # (n, 4)
        helper.make_node("Flatten", ["scores"], ["flat_scores"], axis=0),
        helper.make_node("Squeeze", ["flat_scores"], ["score_list"], axes=[0]),
        helper.make_node("Gather", ["score_list", "box_index"], ["picked_scores"], axis=0),  # (n,)
    ]
    graph = helper.make_graph(
        nodes, "nms_detector", [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, 6, 6])],
        [helper.make_tensor_value_info("picked", TensorProto.FLOAT, ["n", 4]),
         helper.make_tensor_value_info("picked_scores", TensorProto.FLOAT, ["n"])], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    features = rng.normal(0, 1, (1, 8, 6, 6)).astype(np.float32)
    return model, {"features": features}


if __name__ == "__main__":
    save(sys.argv[1], "nms_detector", *build())
