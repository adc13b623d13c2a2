// TensorProto <-> NDArray, ONNX element types <-> DType.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "kiln/runtime/ndarray.h"

namespace kiln::frontend {

// ONNX's name of an element type ("float", "int64", "string", "complex64" ...).
std::string onnx_elem_type_name(int elem_type);
// The DType of an ONNX element type, or nullopt for string, complex and unknown types.
std::optional<DType> dtype_from_onnx(int elem_type);
// Like dtype_from_onnx, but throws naming `what` ("input 'x'") for types kiln has no DType for.
DType expect_dtype_from_onnx(int elem_type, const std::string& what);

// The tensor's value. Data may be in raw_data, in the typed repeated fields, or in an
// external file located relative to `base_dir` (the model's directory). Errors name the
// tensor and say what is wrong (size mismatch, unsupported type, unreadable file).
NDArray ndarray_from_tensor_proto(const onnx::TensorProto& tensor, const std::string& base_dir);

}  // namespace kiln::frontend
