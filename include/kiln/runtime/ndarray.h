// A dense, row-major, 64-byte aligned tensor. Copies share the buffer (like a
// shared_ptr); use clone() for a deep copy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kiln/runtime/dtype.h"

namespace kiln {

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& shape);
// Numpy broadcasting of two shapes, for type relations and the kernels' output functions
// alike; unknown dims (-1, the IR's '?') broadcast against anything. Throws naming both
// shapes when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

class NDArray {
 public:
  static constexpr size_t kAlignment = 64;

  NDArray() = default;
  // Zero-initialised tensor.
  static NDArray empty(Shape shape, DType dtype);
  // Tensor whose elements are `values` converted to dtype.
  static NDArray from_doubles(Shape shape, DType dtype, std::span<const double> values);
  template <class T>
  static NDArray from_vector(Shape shape, const std::vector<T>& values);
  static NDArray scalar(DType dtype, double value);

  bool defined() const { return buffer_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  DType dtype() const { return dtype_; }
  int64_t numel() const { return num_elements(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_bytes(dtype_); }

  void* raw() { return buffer_.get(); }
  const void* raw() const { return buffer_.get(); }
  template <class T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }

  // Element i (flat index) converted to double / int64.
  double at(int64_t i) const { return load_as_double(raw(), dtype_, static_cast<size_t>(i)); }
  int64_t int_at(int64_t i) const { return load_as_int(raw(), dtype_, static_cast<size_t>(i)); }
  void set(int64_t i, double v) { store_from_double(raw(), dtype_, static_cast<size_t>(i), v); }
  std::vector<double> to_doubles() const;
  std::vector<int64_t> to_ints() const;

  NDArray clone() const;
  // Same buffer seen with another shape of equal element count.
  NDArray reshaped(Shape shape) const;
  // Another tensor placed at the start of this one's buffer, which must hold its bytes; a
  // memory plan keeps several tensors of any dtype in one block this way.
  NDArray view(Shape shape, DType dtype) const;
  // Elementwise conversion into a new tensor.
  NDArray cast(DType dtype) const;
  // Byte-wise equality of shape, dtype and contents.
  bool same_as(const NDArray& other) const;

 private:
  std::shared_ptr<std::byte> buffer_;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
};

template <class T>
NDArray NDArray::from_vector(Shape shape, const std::vector<T>& values) {
  std::vector<double> d(values.begin(), values.end());
  DType t = std::is_same_v<T, float>     ? DType::kFloat32
            : std::is_same_v<T, double>  ? DType::kFloat64
            : std::is_same_v<T, int32_t> ? DType::kInt32
            : std::is_same_v<T, bool>    ? DType::kBool
            : std::is_same_v<T, uint8_t> ? DType::kUInt8
            : std::is_same_v<T, int8_t>  ? DType::kInt8
                                         : DType::kInt64;
  return from_doubles(std::move(shape), t, d);
}

}  // namespace kiln
