#include "kiln/support/limits.h"

#include <charconv>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "kiln/support/error.h"

namespace kiln {

namespace {

// Human units for the messages: "16 GiB", "4294967296".
std::string bytes_text(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) return cat(bytes >> 30, " GiB");
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) return cat(bytes >> 20, " MiB");
  return cat(bytes, " bytes");
}

void override_from(const char* variable, int64_t& field) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return;
  const std::string_view value(text);
  int64_t parsed = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed <= 0)
    throw Error(cat("environment variable ", variable, "='", value, "' is not a positive integer"));
  field = parsed;
}

// "(2, 3)", as shape_str prints shapes.
std::string shape_text(std::span<const int64_t> shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += cat(i ? ", " : "", shape[i]);
  return text + ")";
}

std::mutex& limits_mutex() {
  static std::mutex mutex;
  return mutex;
}

Limits& current_limits() {
  static Limits current = Limits::from_environment();
  return current;
}

}  // namespace

Limits Limits::from_environment() {
  Limits l;
  override_from("KILN_MAX_TENSOR_BYTES", l.max_tensor_bytes);
  override_from("KILN_MAX_TENSOR_ELEMENTS", l.max_tensor_elements);
  override_from("KILN_MAX_RANK", l.max_rank);
  override_from("KILN_MAX_NODES", l.max_nodes);
  override_from("KILN_MAX_NESTING_DEPTH", l.max_nesting_depth);
  override_from("KILN_MAX_STRING_BYTES", l.max_string_bytes);
  return l;
}

const Limits& limits() {
  std::lock_guard lock(limits_mutex());
  return current_limits();
}

void set_limits(const Limits& limits) {
  std::lock_guard lock(limits_mutex());
  current_limits() = limits;
}

void check_rank(int64_t rank, std::string_view what) {
  const int64_t limit = limits().max_rank;
  if (rank > limit) throw Error(cat(what, " has rank ", rank, ", above the limit of ", limit, " (KILN_MAX_RANK)"));
}

int64_t checked_tensor_elements(std::span<const int64_t> shape, int64_t element_bytes, std::string_view what) {
  const Limits& l = limits();
  check_rank(static_cast<int64_t>(shape.size()), what);
  auto shaped = [&] { return cat(what, " of shape ", shape_text(shape)); };
  int64_t elements = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0) throw Error(cat(what, " has a negative dimension ", d, " in shape ", shape_text(shape)));
    if (d != 0 && elements > INT64_MAX / d)
      overflow = true;
    else
      elements *= d;
  }
  // A zero dimension makes the tensor empty whatever the others multiply to.
  for (int64_t d : shape)
    if (d == 0) return 0;
  if (overflow) throw Error(cat(shaped(), " has more elements than int64 can count"));
  if (elements > l.max_tensor_elements)
    throw Error(cat(shaped(), " has ", elements, " elements, above the limit of ", l.max_tensor_elements,
                    " (KILN_MAX_TENSOR_ELEMENTS)"));
  if (element_bytes > 0 && elements > l.max_tensor_bytes / element_bytes)
    throw Error(cat(shaped(), " needs ", bytes_text(elements * element_bytes), ", above the limit of ",
                    bytes_text(l.max_tensor_bytes), " (KILN_MAX_TENSOR_BYTES)"));
  return elements;
}

void check_nesting_depth(int64_t depth, const std::string& what) {
  const int64_t limit = limits().max_nesting_depth;
  if (depth > limit)
    throw Error(cat(what, " nest ", depth, " deep, above the limit of ", limit, " (KILN_MAX_NESTING_DEPTH)"));
}

void check_node_count(int64_t count, const std::string& what) {
  const int64_t limit = limits().max_nodes;
  if (count > limit) throw Error(cat(what, " has ", count, " nodes, above the limit of ", limit, " (KILN_MAX_NODES)"));
}

void check_string_bytes(int64_t bytes, const std::string& what) {
  const int64_t limit = limits().max_string_bytes;
  if (bytes > limit)
    throw Error(
        cat(what, " is ", bytes_text(bytes), ", above the limit of ", bytes_text(limit), " (KILN_MAX_STRING_BYTES)"));
}

}  // namespace kiln
