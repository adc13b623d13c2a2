#include "kiln/attrs/window.h"

#include "kiln/runtime/attrs.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln {

namespace {
std::string shown(const std::vector<int64_t>& values) { return AttrValue(values).to_string(); }
}  // namespace

void check_spatial(const std::string& name, const std::vector<int64_t>& values, size_t rank, int64_t minimum) {
  if (values.size() != 1 && values.size() != rank)
    throw std::move(Error(cat("attribute '", name, "' must have 1 or ", rank, " values"))
                        .expected(rank == 2 ? "[v] or [v_h, v_w]" : cat("[v] or ", rank, " values"), shown(values)));
  for (int64_t x : values)
    if (x < minimum)
      throw std::move(Error(cat("attribute '", name, "' must hold values of at least ", minimum))
                          .expected(cat("values >= ", minimum), shown(values)));
}

void check_padding(const std::string& name, const std::vector<int64_t>& values, size_t rank) {
  for (int64_t x : values)
    if (x < 0)
      throw std::move(Error(cat("attribute '", name, "' must not be negative")).expected("values >= 0", shown(values)));
  size_t n = values.size();
  if (n == 1 || n == rank || n == 2 * rank) return;
  std::string forms = rank == 2 ? "[p], [p_h, p_w] or [top, left, bottom, right]"
                                : cat("[p], one value per axis, or ", rank, " begins then ", rank, " ends");
  throw std::move(Error(cat("attribute '", name, "' must have 1, ", rank, " or ", 2 * rank, " values"))
                      .expected(forms, shown(values)));
}

void check_choice(const std::string& name, const std::string& value, std::initializer_list<std::string_view> allowed) {
  for (std::string_view a : allowed)
    if (value == a) return;
  std::vector<std::string> quoted;
  for (std::string_view a : allowed) quoted.push_back(cat('"', a, '"'));
  throw std::move(Error(cat("unsupported value of attribute '", name, "'"))
                      .expected("one of " + join(quoted), cat('"', value, '"')));
}

void check_at_least(const std::string& name, int64_t value, int64_t minimum) {
  if (value < minimum)
    throw std::move(
        Error(cat("attribute '", name, "' must be at least ", minimum)).expected(cat(">= ", minimum), cat(value)));
}

std::vector<int64_t> spatial_values(const std::vector<int64_t>& values, size_t rank) {
  check(values.size() == 1 || values.size() == rank, "window attribute of ", values.size(), " values for ", rank,
        " axes");
  return values.size() == 1 ? std::vector<int64_t>(rank, values[0]) : values;
}

std::vector<int64_t> padding_values(const std::vector<int64_t>& values, size_t rank) {
  if (values.size() == 2 * rank) return values;
  std::vector<int64_t> begins = spatial_values(values, rank);
  std::vector<int64_t> both = begins;
  both.insert(both.end(), begins.begin(), begins.end());
  return both;
}

Pair2D pair_2d(const std::vector<int64_t>& values) {
  std::vector<int64_t> v = spatial_values(values, 2);
  return {v[0], v[1]};
}

Padding2D padding_2d(const std::vector<int64_t>& values) {
  std::vector<int64_t> v = padding_values(values, 2);
  return {v[0], v[1], v[2], v[3]};
}

Window2D window_2d(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                   const std::vector<int64_t>& padding) {
  return {pair_2d(strides), pair_2d(dilation), padding_2d(padding)};
}

WindowGeometry window_geometry(const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                               const std::vector<int64_t>& padding, size_t rank) {
  std::vector<int64_t> pads = padding_values(padding, rank);
  return {spatial_values(strides, rank), spatial_values(dilation, rank),
          std::vector<int64_t>(pads.begin(), pads.begin() + static_cast<int64_t>(rank)),
          std::vector<int64_t>(pads.begin() + static_cast<int64_t>(rank), pads.end())};
}

}  // namespace kiln
