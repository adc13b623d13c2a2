// Reading a ModelProto: parsing a file's bytes (FileBytes maps them) with ONNX's own protobuf
// schema, sanity checks that a parse of random bytes would fail, and ONNX's checker.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

namespace kiln::frontend {

// Throws kiln::Error (without the file name; callers add it) when the bytes are not an
// ONNX model: unparseable (truncated or corrupt), or parsed but without a graph.
onnx::ModelProto parse_model_proto(std::string_view bytes);

// Runs onnx::checker::check_model; its complaint becomes one line of a kiln::Error. A model
// newer than the linked checker (onnx 1.12: IR version 8, opset 17) is checked without
// the operator schemas of its newer domains.
void run_onnx_checker(const onnx::ModelProto& model);

// Label of a node for messages: its name, or "#<index> (<op_type> -> <first output>)".
std::string node_label(const onnx::NodeProto& node, int index);

}  // namespace kiln::frontend
