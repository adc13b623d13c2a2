#include "op/nn/window_attrs.h"

namespace kiln {

Pair2D pair_attr(const Attrs& attrs, const std::string& name, int64_t minimum) {
  std::vector<int64_t> v = attrs.get_ints(name);
  if (v.size() != 1 && v.size() != 2)
    throw std::move(Error(cat("attribute '", name, "' must have 1 or 2 values"))
                        .expected("[v] or [v_h, v_w]", attrs.get(name).to_string()));
  for (int64_t x : v)
    if (x < minimum)
      throw std::move(Error(cat("attribute '", name, "' must hold values of at least ", minimum))
                          .expected(cat("values >= ", minimum), attrs.get(name).to_string()));
  return v.size() == 1 ? Pair2D{v[0], v[0]} : Pair2D{v[0], v[1]};
}

std::vector<int64_t> spatial_attr(const Attrs& attrs, const std::string& name, size_t rank, int64_t minimum) {
  std::vector<int64_t> v = attrs.get_ints(name);
  if (v.size() != 1 && v.size() != rank)
    throw std::move(Error(cat("attribute '", name, "' must have 1 or ", rank, " values"))
                        .expected(cat("[v] or ", rank, " values"), attrs.get(name).to_string()));
  for (int64_t x : v)
    if (x < minimum)
      throw std::move(Error(cat("attribute '", name, "' must hold values of at least ", minimum))
                          .expected(cat("values >= ", minimum), attrs.get(name).to_string()));
  if (v.size() == 1) v.assign(rank, v[0]);
  return v;
}

std::vector<int64_t> padding_nd_attr(const Attrs& attrs, size_t rank, const std::string& name) {
  std::vector<int64_t> v = attrs.get_ints(name);
  for (int64_t x : v)
    if (x < 0)
      throw std::move(Error(cat("attribute '", name, "' must not be negative"))
                          .expected("values >= 0", attrs.get(name).to_string()));
  if (v.size() == 1) return std::vector<int64_t>(2 * rank, v[0]);
  if (v.size() == rank) {
    std::vector<int64_t> both = v;
    both.insert(both.end(), v.begin(), v.end());
    return both;
  }
  if (v.size() == 2 * rank) return v;
  throw std::move(Error(cat("attribute '", name, "' must have 1, ", rank, " or ", 2 * rank, " values"))
                      .expected(cat("[p], one value per axis, or ", rank, " begins then ", rank, " ends"),
                                attrs.get(name).to_string()));
}

Padding2D padding_attr(const Attrs& attrs, const std::string& name) {
  std::vector<int64_t> v = attrs.get_ints(name);
  for (int64_t x : v)
    if (x < 0)
      throw std::move(Error(cat("attribute '", name, "' must not be negative"))
                          .expected("values >= 0", attrs.get(name).to_string()));
  switch (v.size()) {
    case 1: return {v[0], v[0], v[0], v[0]};
    case 2: return {v[0], v[1], v[0], v[1]};
    case 4: return {v[0], v[1], v[2], v[3]};
    default:
      throw std::move(Error(cat("attribute '", name, "' must have 1, 2 or 4 values"))
                          .expected("[p], [p_h, p_w] or [top, left, bottom, right]", attrs.get(name).to_string()));
  }
}

Layout2D layout_attr(const Attrs& attrs, const std::string& name, std::initializer_list<std::string_view> supported) {
  const std::string& layout = choice_attr(attrs, name, supported);
  auto pos = [&](char axis) { return static_cast<int>(layout.find(axis)); };
  return {pos('N'), pos('C'), pos('H'), pos('W')};
}

const std::string& choice_attr(const Attrs& attrs, const std::string& name,
                               std::initializer_list<std::string_view> allowed) {
  const std::string& value = attrs.get_string(name);
  for (std::string_view a : allowed)
    if (value == a) return value;
  std::vector<std::string> quoted;
  for (std::string_view a : allowed) quoted.push_back(cat('"', a, '"'));
  throw std::move(Error(cat("unsupported value of attribute '", name, "'"))
                      .expected("one of " + join(quoted), cat('"', value, '"')));
}

DType out_dtype_attr(const Attrs& attrs, DType fallback) {
  const std::string& name = attrs.get_string("out_dtype");
  if (name.empty()) return fallback;
  DType t;
  if (!try_parse_dtype(name, &t))
    throw std::move(Error("attribute 'out_dtype' is not a dtype").expected("a dtype such as \"float32\"", name));
  return t;
}

const TensorTypeNode& arg_tensor_of_rank(const std::vector<Type>& args, size_t i, const std::string& arg_name,
                                         int64_t rank, const std::string& layout) {
  const TensorTypeNode& t = arg_tensor(args, i, arg_name);
  if (t.ndim() != rank) {
    std::string want = layout.empty() ? cat(rank, "-D tensor") : cat(rank, "-D tensor (", layout, ")");
    throw std::move(
        Error(cat("argument '", arg_name, "' must have ", rank, " dimensions")).expected(want, shape_str(t.shape)));
  }
  return t;
}

void check_float_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (!is_float(t.dtype))
    throw std::move(Error(cat("argument '", arg_name, "' must be floating point"))
                        .expected("float16, bfloat16, float32 or float64", std::string(dtype_name(t.dtype))));
}

void check_numeric_arg(const TensorTypeNode& t, const std::string& arg_name) {
  if (t.dtype == DType::kBool)
    throw std::move(Error(cat("argument '", arg_name, "' must be numeric"))
                        .expected("a float or integer dtype", std::string(dtype_name(t.dtype))));
}

void check_same_extent(int64_t a, int64_t b, const std::string& what, const std::string& a_name, const Shape& a_shape,
                       const std::string& b_name, const Shape& b_shape) {
  if (a < 0 || b < 0 || a == b) return;
  throw std::move(
      Error(cat(what, " of '", a_name, "' ", shape_str(a_shape), " and '", b_name, "' ", shape_str(b_shape), " differ"))
          .expected(cat(a), cat(b)));
}

int64_t window_extent(const std::string& axis_name, const Shape& data_shape, int64_t in, int64_t kernel, int64_t stride,
                      int64_t dilation, int64_t pad_before, int64_t pad_after, bool ceil_mode) {
  try {
    return window_output_size(in, kernel, stride, dilation, pad_before, pad_after, ceil_mode);
  } catch (const Error& e) {
    throw Error(cat(axis_name, " of argument 'data' ", shape_str(data_shape), ": ", e.message()));
  }
}

}  // namespace kiln
