// Ops: nn.max_pool2d, nn.avg_pool2d, nn.global_avg_pool2d, nn.global_max_pool2d, and the
// NCDHW nn.max_pool3d, nn.avg_pool3d; nn.max_pool2d_with_argmax (also the flat input positions of
// the maxima, as ONNX MaxPool's Indices) and its inverse nn.max_unpool.
// Data is NCHW or NHWC; the 2-D pools also take AlterOpLayout's blocked NCHW{x}c, data
// (N, C/x, H, W, x) pooled like NCHW with the block axis carried along. Windows follow
// window_output_size() (ceil_mode as PyTorch and ONNX: a last window that would start in the
// trailing padding is dropped).
//
// Computes and schedules (the 2-D pools): windows of up to 16 taps are written out tap by tap in
// one element-wise expression (no reduction loop), vectorised along the output row; padding taps
// are skipped (max: read at the nearest data row and column, or from a padded copy) or not
// counted (avg, unless count_include_pad) exactly as in the reference kernel, which lets a NaN
// tap win a maximum. Larger windows are reductions; the NCHW global pools first
// sum (or take the maximum of) rows across each plane, vectorised along the row. Blocked pools
// vectorise the channel block, innermost: inside the taps of a reduction, and in the output.
#include <cmath>
#include <unordered_set>

#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

Shape with_spatial(const Shape& data, const Layout2D& layout, int64_t h, int64_t w) {
  Shape out = data;
  out[layout.h] = h;
  out[layout.w] = w;
  return out;
}

// The data of a 2-D pool: 4-D, or 5-D with the channel block innermost for NCHW{x}c.
const TensorTypeNode& pool2d_data(const std::vector<Type>& args, const std::string& layout) {
  const int64_t block = Layout::nchw_block(layout);
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", block ? 5 : 4, layout);
  check_numeric_arg(data, "data");
  if (block && data.shape[4] >= 0 && data.shape[4] != block)
    throw std::move(Error(cat("the innermost axis of 'data' ", shape_str(data.shape), " must be the block of ", layout))
                        .expected(cat(block), cat(data.shape[4])));
  return data;
}

Type pool2d_relation(const std::vector<Type>& args, const Pool2DAttrs& attrs) {
  Layout2D layout = layout_2d(attrs.layout);
  const TensorTypeNode& data = pool2d_data(args, attrs.layout);
  Pair2D pool = attrs.pool();
  Window2D win = attrs.window();
  const Shape& x = data.shape;
  int64_t h = window_extent("height", x, x[layout.h], pool.h, win.strides.h, win.dilation.h, win.padding.top,
                            win.padding.bottom, attrs.ceil_mode);
  int64_t w = window_extent("width", x, x[layout.w], pool.w, win.strides.w, win.dilation.w, win.padding.left,
                            win.padding.right, attrs.ceil_mode);
  return tensor_type(with_spatial(x, layout, h, w), data.dtype);
}

Type global_pool2d_relation(const std::vector<Type>& args, const GlobalPool2DAttrs& attrs) {
  const TensorTypeNode& data = pool2d_data(args, attrs.layout);
  return tensor_type(with_spatial(data.shape, layout_2d(attrs.layout), 1, 1), data.dtype);
}

Type pool3d_relation(const std::vector<Type>& args, const Pool3DAttrs& attrs) {
  const size_t rank = 3;
  const TensorTypeNode& data = arg_tensor_of_rank(args, 0, "data", 5, "NCDHW");
  check_numeric_arg(data, "data");
  std::vector<int64_t> pool = spatial_values(attrs.pool_size, rank);
  WindowGeometry g = attrs.window();
  const char* axis_names[] = {"depth", "height", "width"};
  Shape out{data.shape[0], data.shape[1]};
  for (size_t i = 0; i < rank; ++i)
    out.push_back(window_extent(axis_names[i], data.shape, data.shape[i + 2], pool[i], g.strides[i], g.dilation[i],
                                g.pad_before[i], g.pad_after[i], attrs.ceil_mode));
  return tensor_type(out, data.dtype);
}

// (pooled, int64 indices of the maxima in the flattened input).
Type max_pool2d_with_argmax_relation(const std::vector<Type>& args, const MaxPool2DWithArgmaxAttrs& attrs) {
  Type pooled = pool2d_relation(args, attrs);
  return tuple_type({pooled, tensor_type(as_tensor(pooled)->shape, DType::kInt64)});
}

Type max_unpool_relation(const std::vector<Type>& args, const MaxUnpoolAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& indices = arg_tensor(args, 1, "indices");
  if (!is_int(indices.dtype))
    throw std::move(Error("argument 'indices' must hold integers")
                        .expected("an integer dtype", std::string(dtype_name(indices.dtype))));
  if (indices.ndim() != data.ndim())
    throw std::move(
        Error(cat("shapes of 'data' ", shape_str(data.shape), " and 'indices' ", shape_str(indices.shape), " differ"))
            .expected(shape_str(data.shape), shape_str(indices.shape)));
  for (int64_t i = 0; i < data.ndim(); ++i)
    check_same_extent(data.shape[i], indices.shape[i], cat("axis ", i), "data", data.shape, "indices", indices.shape);
  if (static_cast<int64_t>(attrs.output_shape.size()) != data.ndim())
    throw std::move(
        Error(cat("attribute 'output_shape' must have one extent per axis of 'data' ", shape_str(data.shape)))
            .expected(cat(data.ndim(), " values"), shape_str(attrs.output_shape)));
  return tensor_type(attrs.output_shape, data.dtype);
}

template <class T>
OpDef& add_pool(OpRegistry& registry, const std::string& name, const std::string& doc,
                std::function<Type(const std::vector<Type>&, const T&)> relation) {
  return registry.add(name)
      .describe(doc)
      .arg("data")
      .template attrs<T>()
      .template set_relation<T>(std::move(relation))
      .set_pattern(OpPattern::kOutEWiseFusable);
}

// ----- computes and schedules -----

using tir::PrimExpr;

struct PoolShape {
  Layout2D layout;
  int64_t block;  // x of NCHW{x}c data (N, C/x, H, W, x), else 0
  std::vector<int64_t> out;
  int64_t h, w, oh, ow;
  Pair2D pool, strides, dilation;
  Padding2D pad;
  DType dtype;

  bool nchw() const { return !block && layout.c == 1 && layout.h == 2; }
  int64_t taps() const { return pool.h * pool.w; }
};

// `window` is null for the global pools: one window over the whole plane.
PoolShape pool_shape(const ComputeInput& call, const std::string& layout, const Pool2DAttrs* window) {
  PoolShape s{};
  s.layout = layout_2d(layout);
  s.block = Layout::nchw_block(layout);
  const te::Tensor& x = call.args.at(0);
  s.out = expect_tensor(call.out_type, "output").shape;
  s.h = x.shape()[s.layout.h];
  s.w = x.shape()[s.layout.w];
  s.oh = s.out[s.layout.h];
  s.ow = s.out[s.layout.w];
  s.dtype = x.dtype();
  if (window) {
    const Window2D w = window->window();
    s.pool = window->pool();
    s.strides = w.strides;
    s.dilation = w.dilation;
    s.pad = w.padding;
  } else {
    s.pool = {s.h, s.w};
    s.strides = s.dilation = {1, 1};
    s.pad = {0, 0, 0, 0};
  }
  return s;
}

// Data indices of output element `i` with its spatial indices replaced by (y, x).
std::vector<PrimExpr> at_yx(const te::Indices& i, const Layout2D& l, const PrimExpr& y, const PrimExpr& x) {
  std::vector<PrimExpr> idx(i.begin(), i.end());
  idx[static_cast<size_t>(l.h)] = y;
  idx[static_cast<size_t>(l.w)] = x;
  return idx;
}

struct Tap {
  PrimExpr y, x, inside;
};

Tap tap_at(const PoolShape& s, const PrimExpr& oy, const PrimExpr& ox, const PrimExpr& r, const PrimExpr& q) {
  PrimExpr y = oy * s.strides.h + r * s.dilation.h - s.pad.top;
  PrimExpr x = ox * s.strides.w + q * s.dilation.w - s.pad.left;
  PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, s.h)),
                                     tir::logical_and(tir::ge(x, 0), tir::lt(x, s.w)));
  return {y, x, inside};
}

// Rows and columns the windows reach, counted from the first padding row and column: with
// ceil_mode they may run past the padded data.
int64_t reach_h(const PoolShape& s) { return (s.oh - 1) * s.strides.h + (s.pool.h - 1) * s.dilation.h + 1; }
int64_t reach_w(const PoolShape& s) { return (s.ow - 1) * s.strides.w + (s.pool.w - 1) * s.dilation.w + 1; }

// Some window tap falls outside the data.
bool padded(const PoolShape& s) {
  return s.pad.top || s.pad.left || reach_h(s) > s.h + s.pad.top || reach_w(s) > s.w + s.pad.left;
}

PrimExpr inside_or(const PoolShape& s, const Tap& t, const PrimExpr& value, const PrimExpr& outside) {
  return padded(s) ? tir::select(t.inside, value, outside) : value;
}

constexpr int64_t kMaxUnrolledTaps = 16;

// NCHW and NCHW{x}c data with padding: a copy padded with `fill`, computed row by row by the
// schedule, so that the taps of a vectorised output row load without bounds tests (a tap under a
// bounds test is a conditional load, which keeps the loop scalar: ResNet's 112x112x64 blocked
// max pool took 1 ms). Other layouts: the data.
struct PoolSource {
  te::Tensor data;
  bool copied = false;

  PrimExpr tap(const PoolShape& s, const te::Indices& i, const Tap& t, const PrimExpr& fill) const {
    if (!copied) return inside_or(s, t, data(at_yx(i, s.layout, t.y, t.x)), fill);
    return data(at_yx(i, s.layout, t.y + s.pad.top, t.x + s.pad.left));
  }
};

PoolSource pool_source(const PoolShape& s, const te::Tensor& x, const PrimExpr& fill, const std::string& name) {
  if (!(s.nchw() || s.block) || !padded(s) || s.taps() > kMaxUnrolledTaps) return {x, false};
  std::vector<int64_t> shape = x.shape();
  shape[2] = std::max(s.h + s.pad.top + s.pad.bottom, reach_h(s));
  shape[3] = std::max(s.w + s.pad.left + s.pad.right, reach_w(s));
  te::Tensor copy = te::compute(shape, name + "_data", [&](const te::Indices& i) {
    PrimExpr y = i[2] - s.pad.top, z = i[3] - s.pad.left;
    PrimExpr inside = tir::logical_and(tir::logical_and(tir::ge(y, 0), tir::lt(y, s.h)),
                                       tir::logical_and(tir::ge(z, 0), tir::lt(z, s.w)));
    std::vector<PrimExpr> at(i.begin(), i.end());
    at[2] = y;
    at[3] = z;
    return tir::select(inside, x(at), fill);
  });
  return {copy, true};
}

// Whether a maximum may read its padding taps at the nearest row and column of the data instead:
// with undilated windows that all overlap the data, that element lies in the same window, so the
// maximum (and a NaN's presence) is unchanged, and no padded copy is needed (ResNet's 112x112x64
// blocked max pool copied twice its input, three rows per output row). Blocked data only: in
// NCHW the clamped column is on the vectorised axis and keeps the loop scalar (ShuffleNetV2's
// 112x112x24 pool: 0.30 ms clamped, 0.11 ms from the padded copy).
bool clamps_taps(const PoolShape& s) {
  auto overlaps = [](int64_t out, int64_t in, int64_t pool, int64_t stride, int64_t pad_before) {
    const int64_t last_start = (out - 1) * stride - pad_before;
    return pool - 1 - pad_before >= 0 && last_start <= in - 1;
  };
  return s.block && padded(s) && s.dilation.h == 1 && s.dilation.w == 1 &&
         overlaps(s.oh, s.h, s.pool.h, s.strides.h, s.pad.top) &&
         overlaps(s.ow, s.w, s.pool.w, s.strides.w, s.pad.left);
}

te::Tensor max_pool(const PoolShape& s, const te::Tensor& x, const std::string& name) {
  const PrimExpr lowest = te::reduce_identity(te::ReduceKind::kMax, s.dtype);
  const Layout2D& l = s.layout;
  if (s.taps() <= kMaxUnrolledTaps) {
    const bool clamped = clamps_taps(s);
    PoolSource src = clamped ? PoolSource{x, false} : pool_source(s, x, lowest, name);
    auto value = [&](const te::Indices& i, const Tap& t) {
      if (!clamped) return src.tap(s, i, t, lowest);
      PrimExpr y = tir::min(tir::max(t.y, PrimExpr(0)), PrimExpr(s.h - 1));
      PrimExpr z = tir::min(tir::max(t.x, PrimExpr(0)), PrimExpr(s.w - 1));
      return x(at_yx(i, l, y, z));
    };
    // The reference kernel lets a NaN tap win and stay. Tap by tap, max(best, v) keeps a NaN best
    // (generated code's max propagates its first operand's NaN) and a select takes a NaN v: a
    // vector max and a masked move a tap, `best` written once (a select reading it twice would
    // double the expression at every tap), no || (which would keep the loop from vectorising).
    return te::compute(s.out, name, [&](const te::Indices& i) {
      PrimExpr best;
      for (int64_t r = 0; r < s.pool.h; ++r)
        for (int64_t q = 0; q < s.pool.w; ++q) {
          Tap t = tap_at(s, i[static_cast<size_t>(l.h)], i[static_cast<size_t>(l.w)], PrimExpr(r), PrimExpr(q));
          PrimExpr v = value(i, t);
          if (!best.defined())
            best = v;
          else if (!is_float(s.dtype))
            best = tir::max(best, v);
          else
            best = tir::select(tir::ne(v, v), v, tir::max(best, v));
        }
      return best;
    });
  }
  te::IterVar r = te::reduce_axis(s.pool.h, "ry"), q = te::reduce_axis(s.pool.w, "rx");
  te::Tensor best = te::compute(s.out, name + "_max", [&](const te::Indices& i) {
    Tap t = tap_at(s, i[static_cast<size_t>(l.h)], i[static_cast<size_t>(l.w)], r, q);
    return te::max(inside_or(s, t, x(at_yx(i, l, t.y, t.x)), lowest), {r, q});
  });
  if (!is_float(s.dtype)) return best;
  // A reduction's maximum drops NaN: count the NaN taps beside it.
  te::IterVar r2 = te::reduce_axis(s.pool.h, "ry"), q2 = te::reduce_axis(s.pool.w, "rx");
  te::Tensor nans = te::compute(s.out, name + "_nans", [&](const te::Indices& i) {
    Tap t = tap_at(s, i[static_cast<size_t>(l.h)], i[static_cast<size_t>(l.w)], r2, q2);
    PrimExpr v = x(at_yx(i, l, t.y, t.x));
    PrimExpr is_nan = tir::select(tir::ne(v, v), tir::int_imm(1, DType::kInt32), tir::int_imm(0, DType::kInt32));
    return te::sum(inside_or(s, t, is_nan, tir::int_imm(0, DType::kInt32)), {r2, q2});
  });
  return te::compute(s.out, name, [&](const te::Indices& i) {
    std::vector<PrimExpr> idx(i.begin(), i.end());
    return tir::select(tir::gt(nans(idx), 0), tir::float_imm(std::nan(""), s.dtype), best(idx));
  });
}

// Taps of one axis inside [0, extent) for windows starting at start = o * stride - pad.
PrimExpr taps_inside(const PrimExpr& start, int64_t taps, int64_t dilation, int64_t extent) {
  // first tap r with start + r * dilation >= 0, last one with start + r * dilation < extent
  PrimExpr first = tir::max(PrimExpr(0), tir::floordiv(dilation - 1 - start, dilation));
  PrimExpr last = tir::min(PrimExpr(taps - 1), tir::floordiv(extent - 1 - start, dilation));
  return tir::max(PrimExpr(0), last - first + 1);
}

te::Tensor avg_pool(const PoolShape& s, const te::Tensor& x, bool count_include_pad, const std::string& name) {
  const DType acc = nn::accumulate_dtype(s.dtype);
  const Layout2D& l = s.layout;
  // The divisor of each output row and column, as the reference kernel counts it.
  auto divisor_axis = [&](int64_t out_extent, int64_t in_extent, int64_t taps, int64_t stride, int64_t dilation,
                          int64_t before, int64_t after, const std::string& axis_name) {
    return te::compute({out_extent}, name + "_count_" + axis_name, [&](const te::Indices& i) {
      PrimExpr start = i[0] * stride - before;
      if (count_include_pad) return taps_inside(start + before, taps, dilation, in_extent + before + after);
      return taps_inside(start, taps, dilation, in_extent);
    });
  };
  te::Tensor rows = divisor_axis(s.oh, s.h, s.pool.h, s.strides.h, s.dilation.h, s.pad.top, s.pad.bottom, "h");
  te::Tensor cols = divisor_axis(s.ow, s.w, s.pool.w, s.strides.w, s.dilation.w, s.pad.left, s.pad.right, "w");
  auto average = [&](const te::Indices& i, const PrimExpr& sum) {
    PrimExpr count = rows(i[static_cast<size_t>(l.h)]) * cols(i[static_cast<size_t>(l.w)]);
    PrimExpr mean = tir::select(tir::gt(count, 0), sum / tir::cast(acc, count), tir::make_const(acc, 0));
    return nn::to_out_dtype(mean, s.dtype);
  };
  const PrimExpr zero = tir::make_const(acc, 0);
  if (s.taps() <= kMaxUnrolledTaps) {
    PoolSource src = pool_source(s, x, tir::make_const(s.dtype, 0), name);
    return te::compute(s.out, name, [&](const te::Indices& i) {
      PrimExpr sum;
      for (int64_t r = 0; r < s.pool.h; ++r)
        for (int64_t q = 0; q < s.pool.w; ++q) {
          Tap t = tap_at(s, i[static_cast<size_t>(l.h)], i[static_cast<size_t>(l.w)], PrimExpr(r), PrimExpr(q));
          PrimExpr v = tir::cast(acc, src.tap(s, i, t, tir::make_const(s.dtype, 0)));
          sum = sum.defined() ? sum + v : v;
        }
      return average(i, sum);
    });
  }
  te::IterVar r = te::reduce_axis(s.pool.h, "ry"), q = te::reduce_axis(s.pool.w, "rx");
  te::Tensor sum = te::compute(s.out, name + "_sum", [&](const te::Indices& i) {
    Tap t = tap_at(s, i[static_cast<size_t>(l.h)], i[static_cast<size_t>(l.w)], r, q);
    return te::sum(inside_or(s, t, tir::cast(acc, x(at_yx(i, l, t.y, t.x))), zero), {r, q});
  });
  return te::compute(s.out, name,
                     [&](const te::Indices& i) { return average(i, sum(std::vector<PrimExpr>(i.begin(), i.end()))); });
}

// NCHW global pools: rows of each plane combined first (a reduction over y with x innermost),
// then the row of partial results.
te::Tensor global_pool_nchw(const PoolShape& s, const te::Tensor& x, bool is_max, const std::string& name) {
  const DType acc = is_max ? s.dtype : nn::accumulate_dtype(s.dtype);
  const std::vector<int64_t>& in = x.shape();
  te::IterVar y = te::reduce_axis(s.h, "ry");
  te::Tensor rows = te::compute({in[0], in[1], s.w}, name + "_rows", [&](const te::Indices& i) {
    PrimExpr v = tir::cast(acc, x(i[0], i[1], y, i[2]));
    if (is_max) return te::max(v, {y});
    return te::sum(v, {y});
  });
  te::IterVar c = te::reduce_axis(s.w, "rx");
  te::Tensor plane = te::compute({in[0], in[1]}, name + "_plane", [&](const te::Indices& i) {
    if (is_max) return te::max(rows(i[0], i[1], c), {c});
    return te::sum(rows(i[0], i[1], c), {c});
  });
  if (!is_max) {
    return te::compute(s.out, name, [&](const te::Indices& i) {
      return nn::to_out_dtype(plane(i[0], i[1]) / tir::make_const(acc, static_cast<double>(s.h * s.w)), s.dtype);
    });
  }
  if (!is_float(s.dtype)) return te::compute(s.out, name, [&](const te::Indices& i) { return plane(i[0], i[1]); });
  te::IterVar y2 = te::reduce_axis(s.h, "ry"), x2 = te::reduce_axis(s.w, "rx");
  te::Tensor nans = te::compute({in[0], in[1]}, name + "_nans", [&](const te::Indices& i) {
    PrimExpr v = x(i[0], i[1], y2, x2);
    return te::sum(tir::select(tir::ne(v, v), tir::int_imm(1, DType::kInt32), tir::int_imm(0, DType::kInt32)),
                   {y2, x2});
  });
  return te::compute(s.out, name, [&](const te::Indices& i) {
    return tir::select(tir::gt(nans(i[0], i[1]), 0), tir::float_imm(std::nan(""), s.dtype), plane(i[0], i[1]));
  });
}

bool is_output(const ScheduleInput& in, const te::Tensor& t) {
  return std::any_of(in.outputs.begin(), in.outputs.end(), [&](const te::Tensor& o) { return o.same_as(t); });
}

// Rows of an NCHW stage vectorised, whole planes per parallel task. Returns the row loop.
te::IterVar schedule_rows(te::Stage& stage, int64_t work) {
  const auto leaves = stage.leaf_iter_vars();
  stage.vectorize(leaves[3]);
  te::IterVar planes = stage.fuse(leaves[0], leaves[1]);
  if (work >= nn::kMinParallelWork) stage.parallel(planes);
  return leaves[2];
}

// NCHW{x}c output rows in parallel, the channel block vectorised innermost. Returns the row loop.
te::IterVar schedule_blocked(te::Stage& stage, int64_t work) {
  const auto leaves = stage.leaf_iter_vars();
  stage.vectorize(leaves[4]);
  te::IterVar rows = nn::fuse_all(stage, {leaves[0], leaves[1], leaves[2]});
  if (work >= nn::kMinParallelWork && rows->extent > 1) stage.parallel(rows);
  return rows;
}

// Every stage the pool made (other than the group outputs) is inlined or computed at the root;
// the outputs are rows.
void pool_schedule(const ScheduleInput& in, const PoolShape& s) {
  const te::Tensor& out = in.anchor.at(0);
  const int64_t work = nn::product(s.out) * s.taps();
  std::vector<te::Tensor> stack = {out};
  std::unordered_set<const te::OperationNode*> seen;
  while (!stack.empty()) {
    te::Tensor t = stack.back();
    stack.pop_back();
    if (t.op()->is_placeholder || !seen.insert(t.op().get()).second) continue;
    for (const te::Tensor& i : t.op()->inputs) stack.push_back(i);
    if (std::any_of(in.call.args.begin(), in.call.args.end(), [&](const te::Tensor& a) { return a.same_as(t); }))
      continue;
    te::Stage& stage = in.schedule[t];
    if (is_output(in, t)) continue;
    if (!t.op()->reduce && t.same_as(out)) {
      stage.compute_inline();
      continue;
    }
    if (!t.op()->reduce) continue;
    const auto& axes = t.op()->axis;
    if (s.block && t.ndim() == 5) {
      // The channel block innermost, inside the window's taps: vector maxima and sums.
      stage.reorder({axes[0], axes[1], axes[2], axes[3], t.op()->reduce_axis[0], t.op()->reduce_axis[1], axes[4]});
      stage.vectorize(axes[4]);
      te::IterVar positions = nn::fuse_all(stage, {axes[0], axes[1], axes[2], axes[3]});
      if (work >= nn::kMinParallelWork && positions->extent > 1) stage.parallel(positions);
      continue;
    }
    if (t.ndim() == 3 && s.nchw() && t.name() == in.call.name + "_rows") {
      // x innermost, the reduction over rows outside it: vector adds of whole rows.
      stage.reorder({axes[0], axes[1], t.op()->reduce_axis[0], axes[2]});
      stage.vectorize(axes[2]);
      te::IterVar planes = stage.fuse(axes[0], axes[1]);
      if (work >= nn::kMinParallelWork) stage.parallel(planes);
      continue;
    }
    te::IterVar fused = nn::fuse_all(stage, std::vector<te::IterVar>(axes.begin(), axes.end()));
    if (work >= nn::kMinParallelWork && fused->extent > 1) stage.parallel(fused);
  }
  te::Tensor copy = nn::find_tensor(out, in.call.name + "_data");
  te::Tensor final_out = nn::single_output_like(in, out);
  // Output rows (blocked: rows of channel blocks) with the padded copy computed per row.
  auto rows_of = [&](te::Stage& stage) { return s.block ? schedule_blocked(stage, work) : schedule_rows(stage, work); };
  for (const te::Tensor& o : in.outputs) {
    te::Stage& stage = in.schedule[o];
    if (stage.attach() != te::Stage::Attach::kRoot || stage.op()->reduce) continue;
    if ((s.block && o.ndim() == 5) || (s.nchw() && o.ndim() == 4 && o.shape()[3] > 1)) {
      te::IterVar row = rows_of(stage);
      if (copy.defined() && o.same_as(final_out)) {
        te::Stage& pad = in.schedule[copy];
        pad.compute_at(stage, row);
        pad.vectorize(pad.leaf_iter_vars().back());
      }
    } else {
      schedule_injective_stage(stage, in.target);
    }
  }
  if (copy.defined() && in.schedule[copy].attach() == te::Stage::Attach::kRoot) rows_of(in.schedule[copy]);
}

PoolShape pool_shape_of(const ComputeInput& call, const Pool2DAttrs& attrs) {
  return pool_shape(call, attrs.layout, &attrs);
}
PoolShape pool_shape_of(const ComputeInput& call, const GlobalPool2DAttrs& attrs) {
  return pool_shape(call, attrs.layout, nullptr);
}

std::vector<te::Tensor> max_pool_compute(const ComputeInput& call, const Pool2DAttrs& attrs) {
  return {max_pool(pool_shape_of(call, attrs), call.args.at(0), call.name)};
}

std::vector<te::Tensor> avg_pool_compute(const ComputeInput& call, const AvgPool2DAttrs& attrs) {
  return {avg_pool(pool_shape_of(call, attrs), call.args.at(0), attrs.count_include_pad, call.name)};
}

std::vector<te::Tensor> global_pool_compute(const ComputeInput& call, const GlobalPool2DAttrs& attrs, bool is_max) {
  PoolShape s = pool_shape_of(call, attrs);
  if (s.nchw()) return {global_pool_nchw(s, call.args.at(0), is_max, call.name)};
  return {is_max ? max_pool(s, call.args.at(0), call.name) : avg_pool(s, call.args.at(0), false, call.name)};
}

template <class T>
void set_pool_schedule(OpDef& op) {
  set_schedule<T>(op,
                  [](const ScheduleInput& in, const T& attrs) { pool_schedule(in, pool_shape_of(in.call, attrs)); });
}

void register_pool_strategies(OpRegistry& r) {
  set_compute<Pool2DAttrs>(r.get_mutable("nn.max_pool2d"), max_pool_compute);
  set_compute<AvgPool2DAttrs>(r.get_mutable("nn.avg_pool2d"), avg_pool_compute);
  set_compute<GlobalPool2DAttrs>(
      r.get_mutable("nn.global_max_pool2d"),
      [](const ComputeInput& call, const GlobalPool2DAttrs& a) { return global_pool_compute(call, a, true); });
  set_compute<GlobalPool2DAttrs>(
      r.get_mutable("nn.global_avg_pool2d"),
      [](const ComputeInput& call, const GlobalPool2DAttrs& a) { return global_pool_compute(call, a, false); });
  set_pool_schedule<Pool2DAttrs>(r.get_mutable("nn.max_pool2d"));
  set_pool_schedule<AvgPool2DAttrs>(r.get_mutable("nn.avg_pool2d"));
  set_pool_schedule<GlobalPool2DAttrs>(r.get_mutable("nn.global_max_pool2d"));
  set_pool_schedule<GlobalPool2DAttrs>(r.get_mutable("nn.global_avg_pool2d"));
}

}  // namespace

void register_nn_pool_ops(OpRegistry& registry) {
  add_pool<Pool2DAttrs>(registry, "nn.max_pool2d", "2-D max pooling; padding never wins (it is -inf).",
                        pool2d_relation);
  add_pool<AvgPool2DAttrs>(registry, "nn.avg_pool2d",
                           "2-D average pooling; count_include_pad counts padding positions in the divisor.",
                           pool2d_relation);
  add_pool<Pool3DAttrs>(registry, "nn.max_pool3d", "3-D max pooling of NCDHW data; padding never wins.",
                        pool3d_relation);
  add_pool<AvgPool3DAttrs>(registry, "nn.avg_pool3d",
                           "3-D average pooling of NCDHW data; count_include_pad counts padding positions.",
                           pool3d_relation);
  add_pool<MaxPool2DWithArgmaxAttrs>(registry, "nn.max_pool2d_with_argmax",
                                     "2-D max pooling of NCHW data returning (values, int64 flat input positions of "
                                     "the maxima); column_major counts positions within a plane column by column.",
                                     max_pool2d_with_argmax_relation)
      .set_pattern(OpPattern::kOpaque);
  registry.add("nn.max_unpool")
      .describe(
          "Inverse of max pooling: zeros of output_shape, with data[i] written at flat position indices[i]. "
          "With index_shape (same rank), indices are flat positions in that shape, written at the same "
          "multi-index of the output.")
      .arg("data")
      .arg("indices")
      .attrs<MaxUnpoolAttrs>()
      .set_relation<MaxUnpoolAttrs>(max_unpool_relation)
      .set_pattern(OpPattern::kOpaque);
  add_pool<GlobalPool2DAttrs>(registry, "nn.global_avg_pool2d", "Mean over the spatial axes, kept as 1 x 1.",
                              global_pool2d_relation);
  add_pool<GlobalPool2DAttrs>(registry, "nn.global_max_pool2d", "Maximum over the spatial axes, kept as 1 x 1.",
                              global_pool2d_relation);
  register_pool_strategies(registry);
}

}  // namespace kiln
