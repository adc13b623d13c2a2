// ONNX frontend (in progress).
