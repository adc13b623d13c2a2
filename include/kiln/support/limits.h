// How big an input kiln accepts. Model files and artifacts come from anywhere: a tensor of
// 10^12 elements, a rank of 10^6 or dimensions whose product overflows int64 must be an
// error naming the limit, not an out-of-memory kill or undefined behaviour. One struct holds
// every limit; the defaults fit any real model, and each one can be changed by an
// environment variable (read once, when limits() is first called) or by set_limits().
//
//   KILN_MAX_TENSOR_BYTES     bytes of one tensor             (default 16 GiB)
//   KILN_MAX_TENSOR_ELEMENTS  elements of one tensor          (default 2^32)
//   KILN_MAX_RANK             dimensions of one tensor        (default 64)
//   KILN_MAX_NODES            nodes of one graph or function  (default 1,000,000)
//   KILN_MAX_NESTING_DEPTH    ONNX subgraphs (If / Loop / Scan bodies) inside one another
//                             (default 256)
//   KILN_MAX_STRING_BYTES     one attribute, name or string   (default 64 MiB)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kiln {

struct Limits {
  int64_t max_tensor_bytes = int64_t{16} << 30;
  int64_t max_tensor_elements = int64_t{1} << 32;
  int64_t max_rank = 64;
  int64_t max_nodes = 1'000'000;
  int64_t max_nesting_depth = 256;
  int64_t max_string_bytes = int64_t{64} << 20;

  // The defaults, each overridden by its environment variable when set. Throws kiln::Error
  // naming the variable when its value is not a positive integer.
  static Limits from_environment();
};

// The limits in force: from_environment() until set_limits() replaces them.
const Limits& limits();
void set_limits(const Limits& limits);

// The element count of a tensor of `shape`, after checking the rank, that no dimension is
// negative, that the product does not overflow and is within max_tensor_elements, and that
// elements * `element_bytes` is within max_tensor_bytes. Throws kiln::Error starting with
// `what` ("tensor 'w'") and the shape otherwise.
int64_t checked_tensor_elements(std::span<const int64_t> shape, int64_t element_bytes, std::string_view what);

// Throws kiln::Error when `rank` exceeds max_rank; `what` names the tensor.
void check_rank(int64_t rank, std::string_view what);
// Throws kiln::Error when `depth` exceeds max_nesting_depth; `what` names what nests.
void check_nesting_depth(int64_t depth, const std::string& what);
// Throws kiln::Error when `count` nodes exceed max_nodes; `what` names the graph.
void check_node_count(int64_t count, const std::string& what);
// Throws kiln::Error when `bytes` exceed max_string_bytes; `what` names the string.
void check_string_bytes(int64_t bytes, const std::string& what);

}  // namespace kiln
