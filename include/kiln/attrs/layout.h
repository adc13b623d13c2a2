// Data layouts as TVM writes them: "NCHW", "NCHW8c", "OIHW8i16o". An upper-case letter is a
// primal axis; digits followed by its lower-case letter are a sub axis, a block of that many
// elements split off the primal axis (NCHW8c: the channels C as C/8 blocks, each 8 wide, the
// block innermost). The layout_transform op, blocked nn.conv2d and the AlterOpLayout pass all
// read layouts through this class; it sits in the runtime layer because the reference kernels
// do too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class Layout {
 public:
  struct Axis {
    char name;       // 'C' for a primal axis, 'c' for a sub axis of C
    int64_t factor;  // sub axis: its extent; primal axis: 0
    bool primal() const { return factor == 0; }
  };

  // Throws kiln::Error naming the layout when it is malformed (a sub axis without its primal
  // axis, an axis twice, a zero factor, a stray character).
  static Layout parse(const std::string& name);

  const std::string& name() const { return name_; }
  const std::vector<Axis>& axes() const { return axes_; }
  size_t ndim() const { return axes_.size(); }
  // Position of the axis named `name` ('C' or 'c'), if present.
  std::optional<size_t> position(char name) const;
  // The block size of primal axis `primal` ('C'): its sub axis' factor, 1 when not split.
  int64_t block_of(char primal) const;
  // The same primal axes, in any order and any blocking.
  bool convertible_to(const Layout& other) const;
  // The shape of a tensor of shape `shape` in this layout once laid out in `dst`. Unknown
  // extents (< 0) stay unknown. Throws when a primal extent is not divisible by dst's block.
  std::vector<int64_t> convert_shape(const std::vector<int64_t>& shape, const Layout& dst) const;

  // "NCHW" with the channels blocked by `block` ("NCHW8c"), or "NCHW" for block <= 1.
  static std::string nchw(int64_t block);
  // The x of "NCHW{x}c" (x > 1), else 0: the blocked layout the pools accept.
  static int64_t nchw_block(const std::string& name);

 private:
  std::string name_;
  std::vector<Axis> axes_;
};

// Where each source axis's index comes from in a destination index: the destination axis of
// its primal (and, when the destination blocks it, the position of the block axis), and the
// source's block of it. Computed once per pair of layouts.
struct SourceAxis {
  size_t outer = 0;       // destination position of the primal axis
  size_t inner = 0;       // destination position of its block axis (when dst_block > 1)
  int64_t dst_block = 1;  // the destination's block of this primal (1: not blocked)
  int64_t src_block = 1;  // the source's block of it (1: not blocked)
  bool primal = true;     // this source axis is the primal one, not its block

  // This source axis's index for the destination index `dst_index` (any index type).
  template <class Index, class Div, class Mod>
  Index from(const std::vector<Index>& dst_index, Div div, Mod mod) const {
    Index full = dst_index[outer];
    if (dst_block > 1) full = full * dst_block + dst_index[inner];
    // A block axis of factor 1 (NCHW1c's c) is always 0: mod by 1.
    if (src_block <= 1 && primal) return full;
    return primal ? div(full, src_block) : mod(full, src_block);
  }
};
std::vector<SourceAxis> source_axes(const Layout& src, const Layout& dst);

// For every output element index (in `dst`) the element of the `src` tensor it copies: full
// primal index = outer * block + inner, then split again by the source's blocks. Written over
// any index type so that the reference kernel (int64_t) and the compute (tir expressions)
// share it.
template <class Index, class Div, class Mod>
std::vector<Index> source_index(const std::vector<SourceAxis>& axes, const std::vector<Index>& dst_index, Div div,
                                Mod mod) {
  std::vector<Index> out;
  out.reserve(axes.size());
  for (const SourceAxis& a : axes) out.push_back(a.from(dst_index, div, mod));
  return out;
}

template <class Index, class Div, class Mod>
std::vector<Index> source_index(const Layout& src, const Layout& dst, const std::vector<Index>& dst_index, Div div,
                                Mod mod) {
  return source_index(source_axes(src, dst), dst_index, div, mod);
}

// The blocked layouts AlterOpLayout gives a float32 nn.conv2d, and that its compute assumes:
// data NCHW{in_block}c, weight OIHW{in_block}i{out_block}o, output NCHW{out_block}c; a
// depthwise convolution (groups = channels, one output channel per input channel) has
// OIHW1i{x}o weights (C/x, 1, KH, KW, 1, x) and in_block = out_block; a grouped one whose
// groups are whole blocks has weight axis 1 = one group's input blocks. Blocks of the vector
// width (16 floats with AVX-512, 8 with AVX2) when the channels divide by it, else none (the
// convolution stays NCHW): GCC compiles a half-width block on AVX-512 into shuffles.
// (AlterOpLayout also pads other channel counts and expands narrow groups; see there.)
struct ConvLayoutChoice {
  int64_t in_block = 0, out_block = 0;  // 0: keep NCHW
  bool depthwise = false;
  bool blocked() const { return in_block > 0 && out_block > 0; }
  std::string data_layout() const { return Layout::nchw(in_block); }
  std::string kernel_layout() const;
  std::string out_layout() const { return Layout::nchw(out_block); }
};
// The blocks of nn.conv2d's layouts: nullopt for NCHW / OIHW; data NCHW{x}c with kernel
// OIHW{x}i{y}o (or OIHW1i{x}o, depthwise) and out_layout NCHW{y}c ("" when x == y) give them.
// Throws kiln::Error naming the attribute for anything else.
std::optional<ConvLayoutChoice> conv2d_blocks(const std::string& data_layout, const std::string& kernel_layout,
                                              const std::string& out_layout);
ConvLayoutChoice choose_conv2d_layout(int vector_lanes, int64_t in_channels, int64_t out_channels, int64_t groups);

// float32 lanes of the widest vector unit of the machine this process runs on (16 with
// AVX-512, else 8): generated code is compiled with -march=native for this machine.
int host_vector_lanes();

}  // namespace kiln
