#include "kiln/attrs/layout.h"

#include <cctype>

#include "kiln/support/error.h"

namespace kiln {

namespace {

Error bad_layout(const std::string& name, const std::string& why) {
  return std::move(Error(cat("layout '", name, "': ", why))
                       .expected("upper-case axes, each optionally blocked by digits and its lower-case letter "
                                 "(NCHW, NCHW8c, OIHW8i8o)",
                                 name));
}

char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

Layout Layout::parse(const std::string& name) {
  Layout layout;
  layout.name_ = name;
  if (name.empty()) throw bad_layout(name, "empty");
  for (size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c)) {
      layout.axes_.push_back({name[i], 0});
      ++i;
      continue;
    }
    if (!std::isdigit(c)) throw bad_layout(name, cat("unexpected '", name[i], "'"));
    int64_t factor = 0;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
      factor = factor * 10 + (name[i] - '0');
      if (factor > (int64_t{1} << 30)) throw bad_layout(name, "block factor too large");
    }
    if (i == name.size() || !std::islower(static_cast<unsigned char>(name[i])))
      throw bad_layout(name, "a block factor must be followed by a lower-case axis");
    if (factor <= 0) throw bad_layout(name, "block factors must be positive");
    layout.axes_.push_back({name[i], factor});
    ++i;
  }
  for (size_t i = 0; i < layout.axes_.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (layout.axes_[j].name == layout.axes_[i].name)
        throw bad_layout(name, cat("axis '", layout.axes_[i].name, "' appears twice"));
    if (!layout.axes_[i].primal() && !layout.position(upper(layout.axes_[i].name)))
      throw bad_layout(name, cat("sub axis '", layout.axes_[i].name, "' without its primal axis '",
                                 upper(layout.axes_[i].name), "'"));
  }
  return layout;
}

std::optional<size_t> Layout::position(char name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return i;
  return std::nullopt;
}

int64_t Layout::block_of(char primal) const {
  std::optional<size_t> sub = position(lower(primal));
  return sub ? axes_[*sub].factor : 1;
}

std::vector<SourceAxis> source_axes(const Layout& src, const Layout& dst) {
  std::vector<SourceAxis> out;
  for (const Layout::Axis& axis : src.axes()) {
    SourceAxis a;
    a.primal = axis.primal();
    const char primal = a.primal ? axis.name : upper(axis.name);
    a.outer = *dst.position(primal);
    a.dst_block = dst.block_of(primal);
    if (a.dst_block > 1) a.inner = *dst.position(lower(primal));
    a.src_block = src.block_of(primal);
    out.push_back(a);
  }
  return out;
}

bool Layout::convertible_to(const Layout& other) const {
  size_t primals = 0;
  for (const Axis& axis : axes_) {
    if (!axis.primal()) continue;
    ++primals;
    if (!other.position(axis.name)) return false;
  }
  size_t other_primals = 0;
  for (const Axis& axis : other.axes_) other_primals += axis.primal() ? 1 : 0;
  return primals == other_primals;
}

std::vector<int64_t> Layout::convert_shape(const std::vector<int64_t>& shape, const Layout& dst) const {
  if (shape.size() != ndim())
    throw std::move(Error(cat("a tensor of rank ", shape.size(), " cannot be in layout '", name_, "'"))
                        .expected(cat("rank ", ndim()), cat(shape.size())));
  if (!convertible_to(dst))
    throw std::move(Error(cat("layouts '", name_, "' and '", dst.name_, "' have different primal axes"))
                        .expected(name_, dst.name_));
  std::vector<int64_t> out;
  for (const Axis& axis : dst.axes_) {
    if (!axis.primal()) {
      out.push_back(axis.factor);
      continue;
    }
    int64_t full = shape[*position(axis.name)];
    const int64_t src_block = block_of(axis.name), dst_block = dst.block_of(axis.name);
    if (full >= 0) full *= src_block;
    if (full >= 0 && full % dst_block != 0)
      throw std::move(Error(cat("axis '", axis.name, "' of extent ", full, " does not divide into blocks of ",
                                dst_block, " (layout '", dst.name_, "')"))
                          .expected(cat("a multiple of ", dst_block), cat(full)));
    out.push_back(full < 0 ? full : full / dst_block);
  }
  return out;
}

std::string Layout::nchw(int64_t block) { return block > 1 ? cat("NCHW", block, "c") : "NCHW"; }

std::string ConvLayoutChoice::kernel_layout() const {
  if (!blocked()) return "OIHW";
  return cat("OIHW", depthwise ? 1 : in_block, "i", out_block, "o");
}

namespace {

// The block of `layout` when it is exactly `primals` with `sub` blocked innermost, else 0.
int64_t innermost_block(const std::string& layout, const std::string& primals, const std::string& subs) {
  Layout parsed;
  try {
    parsed = Layout::parse(layout);
  } catch (const Error&) {
    return 0;
  }
  if (parsed.ndim() != primals.size() + subs.size()) return 0;
  for (size_t i = 0; i < parsed.ndim(); ++i) {
    const Layout::Axis& axis = parsed.axes()[i];
    if (i < primals.size()) {
      if (axis.name != primals[i]) return 0;
    } else if (axis.name != subs[i - primals.size()]) {
      return 0;
    }
  }
  return parsed.axes()[primals.size()].factor;
}

}  // namespace

int64_t Layout::nchw_block(const std::string& name) {
  const int64_t block = innermost_block(name, "NCHW", "c");
  return block > 1 ? block : 0;
}

namespace {

Error bad_conv_layout(const std::string& attr, const std::string& expected, const std::string& found) {
  return std::move(Error(cat("attribute '", attr, "' does not fit a blocked convolution")).expected(expected, found));
}

}  // namespace

std::optional<ConvLayoutChoice> conv2d_blocks(const std::string& data_layout, const std::string& kernel_layout,
                                              const std::string& out_layout) {
  if (data_layout == "NCHW") {
    if (kernel_layout != "OIHW") throw bad_conv_layout("kernel_layout", "OIHW", kernel_layout);
    if (!out_layout.empty() && out_layout != "NCHW") throw bad_conv_layout("out_layout", "\"\" or NCHW", out_layout);
    return std::nullopt;
  }
  ConvLayoutChoice blocks;
  blocks.in_block = innermost_block(data_layout, "NCHW", "c");
  if (blocks.in_block <= 0) throw bad_conv_layout("data_layout", "NCHW or NCHW{x}c", data_layout);
  const Layout kernel = Layout::parse(kernel_layout);
  const std::string want_kernel = cat("OIHW", blocks.in_block, "i{y}o or OIHW1i", blocks.in_block, "o");
  const int64_t kernel_in_block = innermost_block(kernel_layout, "OIHW", "io");
  if (kernel.ndim() != 6 || (kernel_in_block != blocks.in_block && kernel_in_block != 1))
    throw bad_conv_layout("kernel_layout", want_kernel, kernel_layout);
  blocks.out_block = kernel.axes()[5].factor;
  // A 1-wide input block with a wider data block: the depthwise weight, one input channel per group.
  blocks.depthwise = kernel_in_block == 1 && blocks.in_block != 1;
  if (blocks.depthwise && blocks.out_block != blocks.in_block)
    throw bad_conv_layout("kernel_layout", cat("OIHW1i", blocks.in_block, "o"), kernel_layout);
  const std::string want_out = Layout::nchw(blocks.out_block);
  if (out_layout.empty() ? blocks.out_block != blocks.in_block : out_layout != want_out)
    throw bad_conv_layout("out_layout", want_out, out_layout);
  return blocks;
}

ConvLayoutChoice choose_conv2d_layout(int vector_lanes, int64_t in_channels, int64_t out_channels, int64_t groups) {
  ConvLayoutChoice choice;
  if (groups > 1 && groups == in_channels && groups == out_channels) {
    choice.depthwise = true;
  } else if (groups != 1) {
    return choice;
  }
  auto block_for = [&](int64_t channels) -> int64_t {
    if (channels <= 0) return 0;
    // Whole vectors only: with 16 lanes, GCC turns an 8-wide block into shuffles across
    // blocks rather than half-width multiply-adds (measured: 3x slower than NCHW).
    return vector_lanes > 1 && channels % vector_lanes == 0 ? int64_t{vector_lanes} : 0;
  };
  choice.out_block = block_for(out_channels);
  choice.in_block = block_for(in_channels);
  if (!choice.blocked()) choice = {};
  return choice;
}

int host_vector_lanes() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f") ? 16 : 8;
#else
  return 8;
#endif
}

}  // namespace kiln
