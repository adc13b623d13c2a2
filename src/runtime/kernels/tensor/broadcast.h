// Row-wise iteration for broadcasting kernels. Instead of mapping every output element
// through a BroadcastIndexer (a division per dimension per element), adjacent dimensions
// that broadcast the same way for every input are merged, and the kernel's inner loop
// runs over whole rows of the innermost merged dimension, where each input either
// advances (step 1) or repeats one element (step 0).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "runtime/kernels/kernel_util.h"

namespace kiln::kernels {

template <size_t N>
struct BroadcastRow {
  int64_t out_offset = 0;
  int64_t length = 0;
  std::array<int64_t, N> in_offset{};
  std::array<int64_t, N> in_step{};  // 0 (repeat) or 1 (advance)
};

namespace detail {

// Aligns every input to the output rank, drops output dims of extent 1 and merges
// neighbours whose broadcast pattern agrees for all inputs.
template <size_t N>
void merge_broadcast_dims(const Shape& out_shape, const std::array<Shape, N>& in_shapes, Shape& merged_out,
                          std::array<Shape, N>& merged_in) {
  const size_t rank = out_shape.size();
  std::array<bool, N> prev_full{};
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = out_shape[d];
    if (extent == 1) continue;
    std::array<bool, N> full{};
    for (size_t k = 0; k < N; ++k) {
      const Shape& s = in_shapes[k];
      size_t lead = rank - s.size();
      full[k] = d >= lead && s[d - lead] != 1;
    }
    if (!merged_out.empty() && full == prev_full) {
      merged_out.back() *= extent;
      for (size_t k = 0; k < N; ++k)
        if (full[k]) merged_in[k].back() *= extent;
    } else {
      merged_out.push_back(extent);
      for (size_t k = 0; k < N; ++k) merged_in[k].push_back(full[k] ? extent : 1);
    }
    prev_full = full;
  }
  if (merged_out.empty()) {  // every dim has extent 1: a single element
    merged_out.push_back(1);
    for (auto& s : merged_in) s.push_back(1);
  }
}

}  // namespace detail

// Calls fn(const BroadcastRow<N>&) for every row of the output. Input shapes must
// broadcast to out_shape (the type relation has checked it).
template <size_t N, class Fn>
void for_each_broadcast_row(const Shape& out_shape, const std::array<Shape, N>& in_shapes, Fn&& fn) {
  if (num_elements(out_shape) == 0) return;
  Shape merged_out;
  std::array<Shape, N> merged_in;
  detail::merge_broadcast_dims(out_shape, in_shapes, merged_out, merged_in);

  std::array<BroadcastIndexer, N> indexers = [&]<size_t... K>(std::index_sequence<K...>) {
    return std::array<BroadcastIndexer, N>{BroadcastIndexer(merged_in[K], merged_out)...};
  }
  (std::make_index_sequence<N>{});

  BroadcastRow<N> row;
  row.length = merged_out.back();
  for (size_t k = 0; k < N; ++k) row.in_step[k] = merged_in[k].back() == 1 && row.length != 1 ? 0 : 1;
  const int64_t rows = num_elements(merged_out) / row.length;
  for (int64_t r = 0; r < rows; ++r) {
    row.out_offset = r * row.length;
    for (size_t k = 0; k < N; ++k) row.in_offset[k] = indexers[k](row.out_offset);
    fn(row);
  }
}

}  // namespace kiln::kernels
