// Spellings shared by the IR printer and parser, kept in one place so that what the
// printer writes is exactly what the parser reads: plain %names, quoting, scalar
// literals (1f, 3i64, 1e-05f, nanf ...) and the base64 payload of the metadata section.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/runtime/ndarray.h"

namespace kiln::text {

// Length of the longest prefix of `text` that the lexer reads as an unquoted name after
// `%` or `@`: characters [A-Za-z0-9_.] and "::" pairs (ONNX names such as onnx::Conv_3),
// without trailing dots.
size_t plain_name_length(std::string_view text);
// True when `name` can be printed after `%`/`@` without quotes: non-empty, read whole by
// the lexer, and not starting with a digit (%0 is a binding, not a variable).
bool is_plain_name(std::string_view name);
// `"text"` with `"` and `\` escaped (the same escaping as string attribute values).
std::string quote(std::string_view text);
// The printed form of a name: itself when plain, else quoted.
std::string name_text(std::string_view name);

// The literal of a scalar (0-d) constant, e.g. 1f, -0.5f, 1f64, 3, 3i64, 7u8, True, or
// nullopt when no literal reads back to the same bytes (then it goes to metadata).
std::optional<std::string> scalar_literal(const NDArray& scalar);
// Reads a scalar literal (a number or nan/inf, optional leading '-', optional dtype
// suffix). Returns nullopt and sets *error when the text is not a valid literal.
std::optional<NDArray> parse_scalar_literal(std::string_view text, std::string* error);

std::string base64_encode(const void* data, size_t size);
// nullopt when `text` is not valid base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace kiln::text
