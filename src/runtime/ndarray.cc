#include "kiln/runtime/ndarray.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kiln/support/error.h"
#include "kiln/support/limits.h"
#include "kiln/support/strings.h"

namespace kiln {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  constexpr int64_t kUnknown = -1;
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (da == kUnknown || db == kUnknown) {
      out[i] = da == kUnknown ? db : da;
    } else {
      throw std::move(Error(cat("shapes cannot be broadcast at dimension ", i))
                          .expected(cat("shapes compatible with ", shape_str(a)), shape_str(b)));
    }
  }
  return out;
}

int64_t num_elements(const Shape& shape) {
  // A zero extent makes the tensor empty whatever the others are: a corrupt .npy header's huge
  // extents beside it must not overflow the product.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

NDArray NDArray::empty(Shape shape, DType dtype) {
  for (int64_t d : shape) check(d >= 0, "cannot allocate a tensor of shape with unknown or negative dimension");
  // Within the limits (kiln/support/limits.h): an error, not an out-of-memory kill.
  checked_tensor_elements(shape, static_cast<int64_t>(dtype_bytes(dtype)), "tensor");
  NDArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  // calloc, not aligned_alloc + memset: a large block comes zeroed from the kernel, and a
  // memset would fault in every page of weights that are about to be overwritten anyway.
  // Over-allocated by the alignment, so that even empty tensors own a distinct, aligned block.
  void* block = std::calloc(std::max<size_t>(a.nbytes(), 1) + kAlignment, 1);
  if (!block) throw std::bad_alloc();
  auto* aligned = static_cast<std::byte*>(block) + (kAlignment - reinterpret_cast<uintptr_t>(block) % kAlignment);
  a.buffer_ = std::shared_ptr<std::byte>(aligned, [block](std::byte*) { std::free(block); });
  return a;
}

NDArray NDArray::from_doubles(Shape shape, DType dtype, std::span<const double> values) {
  NDArray a = empty(std::move(shape), dtype);
  check(static_cast<int64_t>(values.size()) == a.numel(), "from_doubles: ", values.size(), " values for ", a.numel(),
        " elements");
  for (size_t i = 0; i < values.size(); ++i) a.set(static_cast<int64_t>(i), values[i]);
  return a;
}

NDArray NDArray::scalar(DType dtype, double value) {
  double v[] = {value};
  return from_doubles({}, dtype, v);
}

std::vector<double> NDArray::to_doubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = at(static_cast<int64_t>(i));
  return out;
}

std::vector<int64_t> NDArray::to_ints() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = int_at(static_cast<int64_t>(i));
  return out;
}

NDArray NDArray::clone() const {
  NDArray a = empty(shape_, dtype_);
  if (nbytes()) std::memcpy(a.raw(), raw(), nbytes());
  return a;
}

NDArray NDArray::reshaped(Shape shape) const {
  check(num_elements(shape) == numel(), "reshape of ", numel(), " elements to ", num_elements(shape));
  NDArray a = *this;
  a.shape_ = std::move(shape);
  return a;
}

NDArray NDArray::view(Shape shape, DType dtype) const {
  NDArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  for (int64_t d : a.shape_) check(d >= 0, "cannot view a tensor of shape with unknown or negative dimension");
  check(defined() && a.nbytes() <= nbytes(), "view of ", a.nbytes(), " bytes over a buffer of ", nbytes(), " bytes");
  a.buffer_ = buffer_;
  return a;
}

NDArray NDArray::cast(DType dtype) const {
  NDArray a = empty(shape_, dtype);
  bool to_int = is_int(dtype) || dtype == DType::kBool;
  for (int64_t i = 0; i < numel(); ++i) {
    if (to_int && (is_int(dtype_) || dtype_ == DType::kBool))
      store_from_int(a.raw(), dtype, static_cast<size_t>(i), int_at(i));
    else
      a.set(i, at(i));
  }
  return a;
}

bool NDArray::same_as(const NDArray& other) const {
  if (shape_ != other.shape_ || dtype_ != other.dtype_) return false;
  if (defined() != other.defined()) return false;
  return !defined() || nbytes() == 0 || std::memcmp(raw(), other.raw(), nbytes()) == 0;
}

}  // namespace kiln
