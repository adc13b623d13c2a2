// Op: nn.attention, softmax(query x key^T * scale + mask) x value over the last two axes, as
// FuseAttention finds it in exported transformers (nn.matmul, softmax along the last axis,
// nn.matmul). The keys are rows (..., Sk, D), as the heads are split from the projections: the
// transpose to (..., D, Sk) that the spelled-out product reads is not needed.
//
// The compute is the chain itself: scores, logits (scaled and masked; the scores when neither),
// row max, row sum of exponentials, probabilities, output. In float32 the schedule computes all
// but the output inside the output's loop over blocks of query rows, each stage tensorized with
// the kernels of kiln/runtime/microkernels.h (the panel GEMMs, over the keys transposed per
// k-block for the scores, and the softmax row kernels), so only a block of rows x keys of the
// scores exists at a time, in a buffer sized to stay in L2 with the probabilities; blocks of
// (batch, rows) run in parallel.
#include "kiln/attrs/attention.h"

#include "kiln/op/strategy.h"
#include "kiln/runtime/microkernels.h"
#include "op/compute_util.h"
#include "op/nn/nn_compute.h"
#include "op/nn/softmax_rows.h"
#include "op/nn/window_attrs.h"
#include "op/op_util.h"

namespace kiln {

namespace {

using tir::PrimExpr;

// `shape` aligned to the right of `target` with extents 1 or equal (unknown extents pass).
bool broadcasts_to(const Shape& shape, const Shape& target) {
  if (shape.size() > target.size()) return false;
  const size_t offset = target.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && shape[d] != target[offset + d] && shape[d] >= 0 && target[offset + d] >= 0) return false;
  return true;
}

// query (..., Sq, D), key (..., Sk, D), value (..., Sk, Dv), mask broadcasting to (..., Sq, Sk)
// -> (..., Sq, Dv). The batch axes of the three operands are equal.
Type attention_relation(const std::vector<Type>& args, const AttentionAttrs& attrs) {
  const TensorTypeNode& q = arg_tensor(args, 0, "query");
  const TensorTypeNode& k = arg_tensor(args, 1, "key");
  const TensorTypeNode& v = arg_tensor(args, 2, "value");
  check_float_arg(q, "query");
  for (const auto& [t, name] : {std::pair{&k, "key"}, std::pair{&v, "value"}}) {
    if (t->dtype != q.dtype)
      throw std::move(Error(cat("dtype of '", name, "' differs from the query's"))
                          .expected(std::string(dtype_name(q.dtype)), std::string(dtype_name(t->dtype))));
    if (t->ndim() != q.ndim() || q.ndim() < 2)
      throw std::move(Error(cat("'query' ", shape_str(q.shape), " and '", name, "' ", shape_str(t->shape),
                                " must be matrices of the same rank"))
                          .expected(cat(std::max<int64_t>(q.ndim(), 2), " dimensions"), cat(t->ndim())));
    for (int64_t d = 0; d + 2 < q.ndim(); ++d)
      check_same_extent(q.shape[d], t->shape[d], cat("batch extents (axis ", d, ")"), "query", q.shape, name, t->shape);
  }
  const size_t r = q.ndim() - 2;
  check_same_extent(q.shape[r + 1], k.shape[r + 1], "head extents", "query", q.shape, "key", k.shape);
  check_same_extent(k.shape[r], v.shape[r], "key counts", "key", k.shape, "value", v.shape);
  Shape scores(q.shape.begin(), q.shape.end() - 1);
  scores.push_back(k.shape[r]);
  if (args.size() > 3) {
    const TensorTypeNode& mask = arg_tensor(args, 3, "mask");
    if (mask.dtype != q.dtype)
      throw std::move(Error("dtype of 'mask' differs from the query's")
                          .expected(std::string(dtype_name(q.dtype)), std::string(dtype_name(mask.dtype))));
    if (!broadcasts_to(mask.shape, scores))
      throw std::move(Error(cat("'mask' ", shape_str(mask.shape), " does not broadcast to the scores"))
                          .expected(shape_str(scores), shape_str(mask.shape)));
  }
  Shape out = scores;
  out.back() = v.shape[r + 1];
  if (attrs.rows_outer) {
    if (q.ndim() != 3)
      throw std::move(
          Error("attribute 'rows_outer' needs 3-D operands").expected("(batch, Sq, D)", shape_str(q.shape)));
    out = {out[1], out[0] < 0 || out[2] < 0 ? kAnyDim : out[0] * out[2]};
  }
  return tensor_type(out, q.dtype);
}

struct AttentionShape {
  std::vector<int64_t> batch;
  int64_t sq = 0, d = 0, sk = 0, dv = 0;
  bool mask = false;
};

AttentionShape attention_shape(const ComputeInput& call) {
  const te::Tensor& q = call.args.at(0);
  AttentionShape s;
  s.batch.assign(q.shape().begin(), q.shape().end() - 2);
  s.sq = q.shape()[s.batch.size()];
  s.d = q.shape()[s.batch.size() + 1];
  s.sk = call.args.at(1).shape()[s.batch.size()];
  s.dv = call.args.at(2).shape().back();
  s.mask = call.args.size() > 3;
  return s;
}

std::string stage_name(const std::string& base, const char* stage) { return base + "_" + stage; }

// How a product's operands are stored and its output laid out.
struct ProductForm {
  bool b_rows = false;      // b[batch..., j, p] rather than b[batch..., p, j]
  bool rows_outer = false;  // out[i, batch * cols + j] (one batch axis) rather than out[batch..., i, j]
};

// out[batch..., i, j] = sum over p of a[batch..., i, p] * b[batch..., p, j], as `form` stores them,
// summed in `acc`.
te::Tensor batched_product(const te::Tensor& a, const te::Tensor& b, ProductForm form,
                           const std::vector<int64_t>& shape, DType acc, const std::string& name) {
  const size_t rank = a.ndim() - 2;
  const bool b_rows = form.b_rows, rows_outer = form.rows_outer;
  const te::IterVar p = te::reduce_axis(a.shape().back(), "p");
  const int64_t cols = b_rows ? b.shape()[rank] : b.shape()[rank + 1];
  return te::compute(shape, name, [&](const te::Indices& out) {
    std::vector<PrimExpr> i(out.begin(), out.end());
    if (rows_outer) i = {tir::floordiv(out[1], cols), out[0], tir::floormod(out[1], cols)};
    std::vector<PrimExpr> ai(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(rank) + 1), bi(ai.begin(), ai.end());
    ai.push_back(p);
    bi.back() = b_rows ? PrimExpr(i[rank + 1]) : PrimExpr(p);
    bi.push_back(b_rows ? PrimExpr(p) : PrimExpr(i[rank + 1]));
    PrimExpr x = a(ai), y = b(bi);
    if (acc != a.dtype()) {
      x = tir::cast(acc, x);
      y = tir::cast(acc, y);
    }
    return te::sum(x * y, {p});
  });
}

// The product in `acc`, stored in the operands' dtype when that differs.
te::Tensor product_of(const te::Tensor& a, const te::Tensor& b, ProductForm form, const std::vector<int64_t>& shape,
                      const std::string& name) {
  const DType acc = nn::accumulate_dtype(a.dtype());
  if (acc == a.dtype()) return batched_product(a, b, form, shape, acc, name);
  const te::Tensor sum = batched_product(a, b, form, shape, acc, name + "_acc");
  return te::compute(shape, name,
                     [&](const te::Indices& i) { return nn::to_out_dtype(sum(index_exprs(i)), a.dtype()); });
}

std::vector<te::Tensor> attention_compute(const ComputeInput& call, const AttentionAttrs& attrs) {
  const AttentionShape s = attention_shape(call);
  const te::Tensor &q = call.args[0], &k = call.args[1], &v = call.args[2];
  std::vector<int64_t> scores_shape = s.batch;
  scores_shape.push_back(s.sq);
  scores_shape.push_back(s.sk);
  te::Tensor scores = product_of(q, k, ProductForm{true, false}, scores_shape, stage_name(call.name, "scores"));
  te::Tensor logits = scores;
  if (attrs.scale != 1.0 || s.mask)
    logits = te::compute(scores_shape, stage_name(call.name, "logits"), [&](const te::Indices& i) {
      PrimExpr x = scores(index_exprs(i));
      if (attrs.scale != 1.0) x = x * tir::make_const(q.dtype(), attrs.scale);
      if (s.mask) x = x + broadcast_read(call.args[3], i);
      return x;
    });
  const size_t axis = scores_shape.size() - 1;
  std::vector<int64_t> row_shape = scores_shape;
  row_shape[axis] = 1;
  const te::Tensor row_max = nn::row_max_of(logits, axis, row_shape, stage_name(call.name, "max"));
  const te::Tensor row_sum = nn::row_sum_of(logits, row_max, axis, row_shape, stage_name(call.name, "sum"));
  const te::Tensor probs =
      nn::softmax_of(logits, row_max, row_sum, axis, scores_shape, stage_name(call.name, "probs"), false);
  std::vector<int64_t> out_shape = s.batch;
  out_shape.push_back(s.sq);
  out_shape.push_back(s.dv);
  if (attrs.rows_outer) out_shape = {s.sq, s.batch[0] * s.dv};
  return {product_of(probs, v, ProductForm{false, attrs.rows_outer}, out_shape, call.name)};
}

// Rows of one block: the largest divisor of Sq whose scores and probabilities (rows x Sk floats
// each) fit in half of L2. Below kMinBlockRows the products degenerate (a vector times a matrix
// per row, and the NT form transposes the keys once per block: per row), so then the smallest
// divisor of at least kMinBlockRows rows, even past half of L2: ViT-B/16's prime 197 tokens
// took one-row blocks on a 512 KB L2 (its attention at 3% of the peak, 252 of 735 ms on Zen 3).
constexpr int64_t kMinBlockRows = 8;
int64_t block_rows(const AttentionShape& s, const Target& target) {
  const int64_t per_row = 2 * s.sk * static_cast<int64_t>(sizeof(float));
  int64_t rows = 1;
  for (int64_t r = 1; r <= s.sq; ++r)
    if (s.sq % r == 0 && r * per_row <= target.l2_bytes / 2) rows = r;
  if (rows >= kMinBlockRows) return rows;
  for (int64_t r = kMinBlockRows; r <= s.sq; ++r)
    if (s.sq % r == 0) return r;
  return s.sq;
}

// c (rows x cols) += a (rows x k, k contiguous) x b (k x cols, cols contiguous) with the panel GEMM,
// or x b^T (b: cols x k, k contiguous) with its NT form when `form.b_rows`.
te::TensorIntrin panel_product_intrin(const te::Tensor& a, const te::Tensor& b, ProductForm form, int64_t rows,
                                      int64_t cols, const Target& target) {
  const te::Tensor at = te::placeholder(a.shape(), a.dtype(), "A_tile");
  const te::Tensor bt = te::placeholder(b.shape(), b.dtype(), "B_tile");
  std::vector<int64_t> shape(a.ndim() - 2, 1);
  shape.push_back(rows);
  shape.push_back(cols);
  if (form.rows_outer) shape = {rows, cols};
  const te::Tensor desc = batched_product(at, bt, form, shape, DType::kFloat32, "C_tile");
  const bool b_rows = form.b_rows;
  const size_t c_row = form.rows_outer ? 0 : a.ndim() - 2;
  const int64_t k = a.shape().back(), row_bytes = KILN_PANEL_NR * static_cast<int64_t>(sizeof(float));
  const int64_t kc = std::min(k, std::max<int64_t>(16, target.l1_bytes / 2 / row_bytes / 16 * 16));
  const size_t row = a.ndim() - 2;
  auto emit = [rows, cols, k, kc, row, b_rows, c_row](const std::vector<te::BufferSlice>& in,
                                                      const te::BufferSlice& out) {
    const te::BufferSlice &x = in.at(0), &y = in.at(1);
    if (b_rows)
      return tir::Stmt{tir::Evaluate{
          tir::extern_call("kiln_sgemm_panels_nt_f32",
                           {PrimExpr(rows), PrimExpr(cols), PrimExpr(k), x.pointer(), PrimExpr(x.stride(row)),
                            y.pointer(), PrimExpr(y.stride(row)), out.pointer(), PrimExpr(out.stride(c_row)),
                            PrimExpr(std::min<int64_t>(k, KILN_PANEL_NT_KC))})}};
    return tir::Stmt{tir::Evaluate{tir::extern_call(
        "kiln_sgemm_panels_f32",
        {PrimExpr(rows), PrimExpr(cols), PrimExpr(k), x.pointer(), PrimExpr(x.stride(row)), y.pointer(),
         PrimExpr(y.stride(row)), PrimExpr(KILN_PANEL_NR), out.pointer(), PrimExpr(out.stride(c_row)), PrimExpr(kc)})}};
  };
  return te::TensorIntrin{cat("attention_product_", rows, "x", cols), desc, emit};
}

// The batch axes fused, the rows split into blocks: (batch and block, rows in the block).
std::pair<te::IterVar, te::IterVar> block_loops(te::Stage& stage, size_t batch_rank, int64_t rows) {
  te::IterVar outer = stage.axis(batch_rank);
  auto [block, row] = stage.split(outer, rows);
  std::vector<te::IterVar> leaves;
  for (size_t d = 0; d < batch_rank; ++d) leaves.push_back(stage.axis(d));
  leaves.push_back(block);
  return {nn::fuse_all(stage, leaves), row};
}

// The output (Sq, batch * Dv): its columns split into (batch, Dv), the batch outside the row
// blocks and fused with them.
std::pair<te::IterVar, te::IterVar> rows_outer_loops(te::Stage& stage, int64_t rows, int64_t dv) {
  auto [block, row] = stage.split(stage.axis(0), rows);
  auto [batch, col] = stage.split(stage.axis(1), dv);
  stage.reorder({batch, block, row, col});
  return {nn::fuse_all(stage, {batch, block}), row};
}

// The kernels read the operands from memory and write the one output.
bool fused_blocks(const ScheduleInput& in) {
  for (const te::Tensor& t : in.call.args)
    if (!t.op()->is_placeholder) return false;
  return in.call.args.at(0).dtype() == DType::kFloat32 && in.outputs.size() == 1 &&
         in.outputs[0].same_as(in.anchor.at(0));
}

// The softmax of the block's logits, row by row with the row kernels, inside `block` of `o`.
void softmax_rows_at(te::Schedule& schedule, te::Stage& o, const te::IterVar& block, const te::Tensor& logits,
                     size_t axis, const std::string& name) {
  const te::Tensor& out = o.tensor();
  te::Stage& mx = schedule[nn::find_tensor(out, stage_name(name, "max"))];
  mx.compute_at(o, block);
  mx.tensorize(mx.reduce_axis(0), nn::row_max_intrin(logits, axis));
  te::Stage& sm = schedule[nn::find_tensor(out, stage_name(name, "sum"))];
  sm.compute_at(o, block);
  sm.tensorize(sm.reduce_axis(0), nn::row_sum_exp_intrin(logits, axis));
  te::Stage& pr = schedule[nn::find_tensor(out, stage_name(name, "probs"))];
  pr.compute_at(o, block);
  pr.tensorize(pr.axis(axis), nn::softmax_row_intrin(logits, axis));
}

void attention_schedule(const ScheduleInput& in, const AttentionAttrs& attrs) {
  if (!fused_blocks(in)) {
    schedule_reduce(in);
    return;
  }
  const AttentionShape s = attention_shape(in.call);
  const te::Tensor& out = in.anchor.at(0);
  const std::string& name = in.call.name;
  const te::Tensor scores = nn::find_tensor(out, stage_name(name, "scores"));
  const te::Tensor logits = s.mask || attrs.scale != 1.0 ? nn::find_tensor(out, stage_name(name, "logits")) : scores;
  const te::Tensor probs = nn::find_tensor(out, stage_name(name, "probs"));
  const size_t rank = s.batch.size(), axis = rank + 1;
  const int64_t rows = block_rows(s, in.target);

  te::Stage& o = in.schedule[out];
  auto [task, row] = attrs.rows_outer ? rows_outer_loops(o, rows, s.dv) : block_loops(o, rank, rows);
  if (nn::product(s.batch) * s.sq * s.sk * (s.d + s.dv) >= nn::kMinParallelWork && task->extent > 1) o.parallel(task);
  o.tensorize(
      row, panel_product_intrin(probs, in.call.args[2], ProductForm{false, attrs.rows_outer}, rows, s.dv, in.target));

  te::Stage& sc = in.schedule[scores];
  sc.compute_at(o, task);
  sc.tensorize(block_loops(sc, rank, rows).second,
               panel_product_intrin(in.call.args[0], in.call.args[1], ProductForm{true, false}, rows, s.sk, in.target));
  if (!logits.same_as(scores)) {
    te::Stage& lg = in.schedule[logits];
    lg.compute_at(o, task);
    lg.vectorize(lg.axis(axis));
  }
  softmax_rows_at(in.schedule, o, task, logits, axis, name);
}

}  // namespace

// Two products: query x key^T (Sq x Sk x D) and probabilities x value (Sq x Sk x Dv) per batch.
double attention_flops(const std::vector<Type>& args, const Type& out_type, const AttentionAttrs&) {
  const TensorTypeNode* query = as_tensor(args.at(0));
  const TensorTypeNode* key = as_tensor(args.at(1));
  const TensorTypeNode* out = as_tensor(out_type);
  if (!query || !key || !out || query->shape.size() < 2 || key->shape.size() < 2) return 0;
  const double sk = static_cast<double>(key->shape[key->shape.size() - 2]);
  const double d = static_cast<double>(query->shape.back()), dv = static_cast<double>(out->shape.back());
  return sk < 0 || d < 0 || dv <= 0 ? 0 : 2.0 * known_elements(out->shape) / dv * sk * (d + dv);
}

void register_nn_attention_ops(OpRegistry& registry) {
  OpDef& def = registry.add("nn.attention")
                   .describe(
                       "softmax(query x key^T * scale + mask, last axis) x value: query (..., Sq, D), key (..., Sk, "
                       "D), value (..., Sk, Dv), an optional additive mask broadcasting to (..., Sq, Sk).")
                   .arg("query")
                   .arg("key")
                   .arg("value")
                   .arg("mask", true)
                   .attrs<AttentionAttrs>()
                   .set_relation<AttentionAttrs>(attention_relation)
                   .set_pattern(OpPattern::kOpaque)
                   .set_flops<AttentionAttrs>(attention_flops);
  set_compute<AttentionAttrs>(def, attention_compute);
  set_schedule<AttentionAttrs>(def, attention_schedule);
}

}  // namespace kiln
