// Ops: nn.dense, nn.dense_packed, nn.matmul, nn.batch_matmul.
//
// Computes and schedules: all four are one batched product out[..., m, n] = sum_k A[m, k] * B[k, n]
// over operands stored either way round (nn.dense_packed: B in panels of 32 columns, (N/32, K, 32),
// as PackDenseWeights lays out constant weights). In float32 it is tiled for the micro-kernels of
// kiln/runtime/microkernels.h: when a is contiguous along k and b along n (packed panels or a
// row-major matrix), the panel GEMM kiln_sgemm_panels_f32 (register tiles of 12 rows with AVX-512,
// else 8, x 32 columns over k-blocks sized from the target's L1, any row count); when both are contiguous along k and b
// is no packed constant (Q x K^T), kiln_sgemm_panels_nt_f32, the same tiles over b transposed per
// k-block inside the kernel; otherwise the NT tile (dot products) when both operands are contiguous
// along k, the NN tile (a broadcast times rows of b)
// when b is contiguous along n. When element-wise ops follow, the product is computed block by block
// inside their loops. Other dtypes and vector operands are plain reductions. Integer operands
// into int32 sum in wrapping int32, as the reference kernels define; int16 ones (QnnLegalize's
// form of qnn.matmul) take the integer NN tile kiln_igemm_nn_s16_* when b is contiguous along n.
#include "kiln/attrs/layout.h"
#include "kiln/attrs/nn.h"
#include "kiln/runtime/microkernels.h"
#include "op/nn/nn_compute.h"
#include "op/nn/window_attrs.h"

namespace kiln {

namespace {

void check_same_dtype(const std::vector<Type>& args, const TensorTypeNode& a, const std::string& a_name,
                      const TensorTypeNode& b, const std::string& b_name) {
  if (a.dtype != b.dtype)
    throw std::move(
        Error(cat("dtypes of '", a_name, "' ", type_str(args[0]), " and '", b_name, "' ", type_str(args[1]), " differ"))
            .expected(std::string(dtype_name(a.dtype)), std::string(dtype_name(b.dtype))));
}

void check_units(const DenseAttrs& attrs, int64_t n, const std::string& weight_name, const Shape& weight_shape) {
  if (!attrs.units) return;
  const int64_t units = *attrs.units;
  if (n >= 0 && units != n)
    throw std::move(Error(cat("attribute 'units' disagrees with '", weight_name, "' ", shape_str(weight_shape)))
                        .expected(cat(n), cat(units)));
}

// data (..., K) x weight (N, K) -> (..., N).
Type dense_relation(const std::vector<Type>& args, const DenseAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 2, "units, K");
  check_numeric_arg(data, "data");
  check_same_dtype(args, data, "data", weight, "weight");
  if (data.ndim() < 1)
    throw std::move(
        Error("argument 'data' must have at least 1 dimension").expected("(..., K)", shape_str(data.shape)));
  check_same_extent(data.shape.back(), weight.shape[1], "reduction extents (last axes)", "data", data.shape, "weight",
                    weight.shape);
  check_units(attrs, weight.shape[0], "weight", weight.shape);
  Shape out = data.shape;
  out.back() = weight.shape[0];
  return tensor_type(out, out_dtype_of(attrs.out_dtype, data.dtype));
}

// data (..., K) x weight (panels, K, block) -> (..., units): the weight holds units rows in panels.
Type dense_packed_relation(const std::vector<Type>& args, const DensePackedAttrs& attrs) {
  const TensorTypeNode& data = arg_tensor(args, 0, "data");
  const TensorTypeNode& weight = arg_tensor_of_rank(args, 1, "weight", 3, "panels, K, block");
  if (!is_float(data.dtype))
    throw std::move(Error("argument 'data' must be floating point")
                        .expected("float32 or float64", std::string(dtype_name(data.dtype))));
  check_same_dtype(args, data, "data", weight, "weight");
  if (data.ndim() < 1)
    throw std::move(
        Error("argument 'data' must have at least 1 dimension").expected("(..., K)", shape_str(data.shape)));
  check_same_extent(data.shape.back(), weight.shape[1], "reduction extents", "data", data.shape, "weight",
                    weight.shape);
  const int64_t panels = weight.shape[0], block = weight.shape[2];
  if (panels >= 0 && block >= 0 && (attrs.units <= (panels - 1) * block || attrs.units > panels * block))
    throw std::move(Error(cat("attribute 'units' does not fit the panels of 'weight' ", shape_str(weight.shape)))
                        .expected(cat("(", (panels - 1) * block, ", ", panels * block, "]"), cat(attrs.units)));
  Shape out = data.shape;
  out.back() = attrs.units;
  return tensor_type(out, data.dtype);
}

// The batch dims and matrix extents of one matmul operand.
struct MatmulOperand {
  Shape batch;
  int64_t rows, cols;  // after the operand's transpose
};

MatmulOperand matmul_operand(const TensorTypeNode& t, bool transpose) {
  Shape batch(t.shape.begin(), t.shape.end() - 2);
  int64_t r = t.shape[t.ndim() - 2], c = t.shape[t.ndim() - 1];
  return transpose ? MatmulOperand{batch, c, r} : MatmulOperand{batch, r, c};
}

Shape broadcast_batch(const MatmulOperand& a, const std::string& a_name, const Shape& a_shape, const MatmulOperand& b,
                      const std::string& b_name, const Shape& b_shape) {
  try {
    return broadcast_shapes(a.batch, b.batch);
  } catch (const Error&) {
    throw std::move(Error(cat("batch dimensions of '", a_name, "' ", shape_str(a_shape), " and '", b_name, "' ",
                              shape_str(b_shape), " cannot be broadcast"))
                        .expected("equal batch extents or 1", cat(shape_str(a.batch), " and ", shape_str(b.batch))));
  }
}

// Numpy matmul with optional transposes of the last two axes; a 1-D operand is a vector
// (its axis is dropped from the result, as numpy does).
Type matmul_relation(const std::vector<Type>& args, const MatmulAttrs& attrs) {
  const TensorTypeNode& a = arg_tensor(args, 0, "tensor_a");
  const TensorTypeNode& b = arg_tensor(args, 1, "tensor_b");
  check_numeric_arg(a, "tensor_a");
  check_same_dtype(args, a, "tensor_a", b, "tensor_b");
  for (const auto& [t, name] : {std::pair{&a, "tensor_a"}, std::pair{&b, "tensor_b"}})
    if (t->ndim() < 1)
      throw std::move(
          Error(cat("argument '", name, "' must have at least 1 dimension")).expected("a vector or matrix", "()"));
  // A vector a is a row (1, K); a vector b is a column (K, 1).
  MatmulOperand ma = a.ndim() == 1 ? MatmulOperand{{}, 1, a.shape[0]} : matmul_operand(a, attrs.transpose_a);
  MatmulOperand mb = b.ndim() == 1 ? MatmulOperand{{}, b.shape[0], 1} : matmul_operand(b, attrs.transpose_b);
  check_same_extent(ma.cols, mb.rows, "reduction extents", "tensor_a", a.shape, "tensor_b", b.shape);
  Shape out = broadcast_batch(ma, "tensor_a", a.shape, mb, "tensor_b", b.shape);
  if (a.ndim() > 1) out.push_back(ma.rows);
  if (b.ndim() > 1) out.push_back(mb.cols);
  check_units(attrs, b.ndim() > 1 ? mb.cols : kAnyDim, "tensor_b", b.shape);
  return tensor_type(out, out_dtype_of(attrs.out_dtype, a.dtype));
}

// x (B, M, K) x y (B, N, K) -> (B, M, N) with Relay's defaults (y transposed); a batch of 1 broadcasts.
Type batch_matmul_relation(const std::vector<Type>& args, const BatchMatmulAttrs& attrs) {
  const TensorTypeNode& x = arg_tensor_of_rank(args, 0, "x", 3, "batch, M, K");
  const TensorTypeNode& y = arg_tensor_of_rank(args, 1, "y", 3, attrs.transpose_b ? "batch, N, K" : "batch, K, N");
  check_numeric_arg(x, "x");
  check_same_dtype(args, x, "x", y, "y");
  MatmulOperand mx = matmul_operand(x, attrs.transpose_a);
  MatmulOperand my = matmul_operand(y, attrs.transpose_b);
  check_same_extent(mx.cols, my.rows, "reduction extents", "x", x.shape, "y", y.shape);
  Shape out = broadcast_batch(mx, "x", x.shape, my, "y", y.shape);
  out.push_back(mx.rows);
  out.push_back(my.cols);
  return tensor_type(out, out_dtype_of(attrs.out_dtype, x.dtype));
}

// ----- computes and schedules -----

using tir::PrimExpr;

// An operand whose last two axes hold the matrix (after the batch axes, which broadcast against
// the output's); rows_are_k: stored (K, X) rather than (X, K). A vector operand is only k.
struct Operand {
  te::Tensor t;
  bool vector = false;
  bool rows_are_k = false;
  std::vector<bool> broadcast;  // per batch axis of the operand: extent 1 against a larger output
  int64_t panel = 0;            // > 0: b packed as (N / panel, K, panel)

  size_t batch_rank() const { return vector || panel > 0 ? 0 : t.ndim() - 2; }
  size_t row_axis() const { return panel > 0 ? 1 : t.ndim() - 2; }
};

struct Product {
  std::vector<int64_t> batch;  // the output's batch extents
  int64_t m = 1, n = 1, k = 1;
  Operand a, b;  // a: (M, K) rows, b: (N, K) rows, as stored or transposed
  DType dtype = DType::kFloat32, out_dtype = DType::kFloat32;
  DType acc = DType::kFloat32;  // what products are summed in

  bool has_m() const { return !a.vector; }
  bool float_tiles() const { return dtype == DType::kFloat32 && out_dtype == DType::kFloat32; }
  // int16 operands into an int32 accumulator: the integer micro-kernel's contract.
  bool integer_tiles() const { return dtype == DType::kInt16 && out_dtype == DType::kInt32; }
  bool has_n() const { return !b.vector; }
};

Operand matrix_operand(const te::Tensor& t, bool rows_are_k, const std::vector<int64_t>& out_batch) {
  Operand op{t, false, rows_are_k, {}};
  const size_t rank = t.ndim() - 2, offset = out_batch.size() - rank;
  for (size_t d = 0; d < rank; ++d) op.broadcast.push_back(t.shape()[d] == 1 && out_batch[offset + d] != 1);
  return op;
}

// Indices into an operand for output batch indices `batch`, its row `x` and reduction index `k`.
std::vector<PrimExpr> operand_indices(const Operand& op, const std::vector<PrimExpr>& batch, const PrimExpr& x,
                                      const PrimExpr& k) {
  if (op.vector) return {k};
  if (op.panel > 0) return {tir::floordiv(x, op.panel), k, tir::floormod(x, op.panel)};
  std::vector<PrimExpr> idx;
  const size_t rank = op.batch_rank(), offset = batch.size() - rank;
  for (size_t d = 0; d < rank; ++d) idx.push_back(op.broadcast[d] ? PrimExpr(0) : batch[offset + d]);
  if (op.rows_are_k) {
    idx.push_back(k);
    idx.push_back(x);
  } else {
    idx.push_back(x);
    idx.push_back(k);
  }
  return idx;
}

Product product_of(const ComputeInput& call) {
  Product p;
  const TensorTypeNode& out = expect_tensor(call.out_type, "output");
  p.dtype = call.args.at(0).dtype();
  p.out_dtype = out.dtype;
  // Integers into int32 wrap in the reference kernels: an int32 sum in any order is exact.
  p.acc = is_int(p.dtype) && p.out_dtype == DType::kInt32 ? DType::kInt32 : nn::accumulate_dtype(p.dtype);
  return p;
}

Product dense_product(const ComputeInput& call, const DenseAttrs&) {
  Product p = product_of(call);
  const te::Tensor& x = call.args.at(0);
  const te::Tensor& w = call.args.at(1);
  p.k = x.shape().back();
  p.n = w.shape()[0];
  if (x.ndim() == 1) {
    p.a = Operand{x, true, false, {}};
  } else {
    p.batch.assign(x.shape().begin(), x.shape().end() - 2);
    p.m = x.shape()[x.ndim() - 2];
    p.a = matrix_operand(x, false, p.batch);
  }
  p.b = Operand{w, false, false, {}};
  return p;
}

Product dense_packed_product(const ComputeInput& call, const DensePackedAttrs& attrs) {
  Product p = product_of(call);
  const te::Tensor& x = call.args.at(0);
  const te::Tensor& w = call.args.at(1);
  p.k = x.shape().back();
  p.n = attrs.units;
  if (x.ndim() == 1) {
    p.a = Operand{x, true, false, {}};
  } else {
    p.batch.assign(x.shape().begin(), x.shape().end() - 2);
    p.m = x.shape()[x.ndim() - 2];
    p.a = matrix_operand(x, false, p.batch);
  }
  p.b = Operand{w, false, false, {}, w.shape()[2]};
  return p;
}

// nn.matmul and nn.batch_matmul: the same product, batch_matmul's operands always matrices.
Product matmul_product(const ComputeInput& call, bool ta, bool tb) {
  Product p = product_of(call);
  const te::Tensor& a = call.args.at(0);
  const te::Tensor& b = call.args.at(1);
  const TensorTypeNode& out = expect_tensor(call.out_type, "output");
  const size_t matrix_dims = (a.ndim() > 1 ? 1 : 0) + (b.ndim() > 1 ? 1 : 0);
  p.batch.assign(out.shape.begin(), out.shape.end() - static_cast<std::ptrdiff_t>(matrix_dims));
  if (a.ndim() == 1) {
    p.a = Operand{a, true, false, {}};
    p.k = a.shape()[0];
  } else {
    p.a = matrix_operand(a, ta, p.batch);
    p.m = a.shape()[a.ndim() - (ta ? 1 : 2)];
    p.k = a.shape()[a.ndim() - (ta ? 2 : 1)];
  }
  if (b.ndim() == 1) {
    p.b = Operand{b, true, false, {}};
  } else {
    // b is (K, N) unless transposed; batch_matmul follows the same flags.
    p.b = matrix_operand(b, !tb, p.batch);
    p.n = b.shape()[b.ndim() - (tb ? 2 : 1)];
  }
  return p;
}

enum class ProductKernel : uint8_t { kGeneric, kNT, kNN, kPanels, kPanelsNT };

struct ProductPlan {
  ProductKernel kernel = ProductKernel::kGeneric;
  int64_t mr = 1, nr = 1;  // micro-kernel tile
  int64_t mb = 1, nb = 1;  // fused block: rows x columns of the output computed at once
  int64_t np = 0;          // columns of the core (NN: whole tiles; the micro-kernel masks the rest)
  int64_t mp = 0;          // rows of the core (panels in row bands: whole bands, the last one's call clamped)

  // Row bands of A, each used for all columns before the next: tiles rows outside.
  bool banded(const Product& p) const { return mp > p.m; }
};

// Rows of one panel-GEMM call: all of them up to 512 (a block of A, rows x kc, then stays in
// L2), else a divisor of at least 64; 0 when there is none (the other tiles take it).
int64_t panel_rows(int64_t m) {
  if (m <= 512) return m;
  for (int64_t d = 512; d >= 64; --d)
    if (m % d == 0) return d;
  return 0;
}

bool panel_product(const Product& p) {
  return p.float_tiles() && p.has_m() && p.has_n() && !p.a.rows_are_k &&
         (p.b.panel > 0 ? p.b.panel == KILN_PANEL_NR : p.b.rows_are_k) && panel_rows(p.m) > 0;
}

// b stored as (N, K) rows and not packed (Q x K^T, a dense with a computed weight): the panel
// tiles over a copy of b transposed per k-block inside the kernel.
bool transposed_panel_product(const Product& p) {
  return p.float_tiles() && p.has_m() && p.has_n() && !p.a.rows_are_k && p.b.panel == 0 && !p.b.rows_are_k &&
         panel_rows(p.m) > 0;
}

// Rows of one call when the call's rows of A (rows x k) do not fit in L2: each call streams its
// rows of A through every k-block, so every column tile then reads all of A from L3 again (ViT-B/16's
// 3072 -> 768 products: 2.4 MB of A, read by twelve tiles). Bands of rows whose A fits L2, rounded
// up to whole micro-kernel tiles, run one after another, each over all the columns, so B is read
// once per band instead (the last band is shorter). ViT-B/16 5-6% faster at one thread, 2-4% at
// two (in-process A/B); BERT's 1.5 MB of A, banded in two against a 2 MB L2, lost 2%, so an A
// that fits stays whole.
int64_t band_rows(int64_t rows, int64_t k, const Target& target) {
  const int64_t a_bytes = rows * k * static_cast<int64_t>(sizeof(float)), budget = target.l2_bytes;
  if (a_bytes <= budget || budget <= 0) return rows;
  const int64_t bands = (a_bytes + budget - 1) / budget;
  // Whole tiles of the generated code's micro-kernel (KILN_PANEL_MR there: 12 rows with AVX-512,
  // 6 with AVX2).
  const int64_t tile_rows = host_vector_lanes() >= 16 ? 12 : 6;
  return std::min(rows, nn::round_up((rows + bands - 1) / bands, tile_rows));
}

// One call per tile of rows x (a multiple of 32) columns. Wider tiles reuse each L2-resident
// block of A over more panels (with 32 columns and a large k, every task streams all of A from
// L3 again); they widen while there are at least 8 tiles to spread over the threads and the
// tile (a local buffer when an epilogue is fused) stays within 256 KiB; an even number of tiles
// leaves no thread idle at the end on two cores.
ProductPlan plan_panels(const Product& p, const Target& target) {
  ProductPlan plan;
  plan.kernel = ProductKernel::kPanels;
  plan.mr = band_rows(panel_rows(p.m), p.k, target);
  plan.mp = nn::round_up(p.m, plan.mr);
  plan.np = nn::round_up(p.n, KILN_PANEL_NR);
  plan.nr = KILN_PANEL_NR;
  const int64_t row_tiles = nn::product(p.batch) * (plan.mp / plan.mr);
  auto tiles = [&](int64_t nr) { return row_tiles * (plan.np / nr); };
  while (plan.np % (2 * plan.nr) == 0 && tiles(2 * plan.nr) >= 8 && tiles(2 * plan.nr) % 2 == 0 &&
         plan.mr * 2 * plan.nr * 4 <= (256 << 10))
    plan.nr *= 2;
  plan.mb = plan.mr;
  plan.nb = plan.nr;
  return plan;
}

ProductPlan plan_product(const Product& p, const Target& target) {
  ProductPlan plan;
  plan.np = p.n;
  plan.mp = p.m;
  if (panel_product(p)) return plan_panels(p, target);
  if (transposed_panel_product(p)) {
    plan = plan_panels(p, target);
    plan.kernel = ProductKernel::kPanelsNT;
    return plan;
  }
  if (!(p.float_tiles() || p.integer_tiles()) || !p.has_m() || !p.has_n() || p.b.panel > 0) return plan;
  if (p.float_tiles() && !p.a.rows_are_k && !p.b.rows_are_k) {
    plan.kernel = ProductKernel::kNT;
    if (p.m % 4 == 0 && p.n % 4 == 0) {
      plan.mr = plan.nr = 4;
    } else if (p.m % 2 == 0 && p.n % 4 == 0) {
      plan.mr = 2;
      plan.nr = 4;
    } else {
      plan.nr = nn::first_divisor(p.n, {8, 4, 1});
    }
    plan.nb = plan.nr;
    for (int64_t b = plan.nr; b <= std::min<int64_t>(p.n, 64); b += plan.nr)
      if (p.n % b == 0) plan.nb = b;
  } else if (p.b.rows_are_k) {
    plan.kernel = ProductKernel::kNN;
    plan.mr = nn::first_divisor(p.m, {8, 4, 2, 1});
    plan.nr = p.n > 16 ? 32 : 16;
    plan.nb = std::min<int64_t>(nn::round_up(p.n, plan.nr), 128);
    plan.np = nn::round_up(p.n, plan.nb);
  } else {
    return plan;
  }
  plan.mb = plan.mr;
  for (int64_t b = plan.mr; b <= p.m && b * plan.nb <= 4096; b += plan.mr)
    if (p.m % b == 0) plan.mb = b;
  return plan;
}

std::string core_name(const std::string& base) { return base + "_core"; }

// out[batch..., m, n] for n < `columns` (the NN core may run past n: its loads are masked).
te::Tensor product_core(const Product& p, const te::Tensor& a, const te::Tensor& b, std::vector<int64_t> shape,
                        const std::string& name) {
  te::IterVar k = te::reduce_axis(p.k, "k");
  Operand oa = p.a, ob = p.b;
  oa.t = a;
  ob.t = b;
  const size_t batch_rank = shape.size() - 2;
  return te::compute(shape, name, [&](const te::Indices& i) {
    std::vector<PrimExpr> batch(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(batch_rank));
    PrimExpr x = a(operand_indices(oa, batch, i[batch_rank], k)),
             y = b(operand_indices(ob, batch, i[batch_rank + 1], k));
    if (p.acc != p.dtype) {
      x = tir::cast(p.acc, x);
      y = tir::cast(p.acc, y);
    }
    return te::sum(x * y, {k});
  });
}

// k rows per block of the panel GEMM: a block of one panel (k x 32 floats) fills half of L1, and
// the block of A (rows x k) at most half of L2.
int64_t panel_k_block(const Product& p, const ProductPlan& plan, const Target& target) {
  const int64_t row_bytes = KILN_PANEL_NR * static_cast<int64_t>(sizeof(float));
  int64_t kc = std::max<int64_t>(16, target.l1_bytes / 2 / row_bytes / 16 * 16);
  const int64_t l2_kc = target.l2_bytes / 2 / (plan.mr * static_cast<int64_t>(sizeof(float)));
  kc = std::max<int64_t>(16, std::min(kc, l2_kc / 16 * 16));
  return std::min(kc, p.k);
}

te::TensorIntrin product_tile_intrin(const Product& p, const ProductPlan& plan, const Target& target) {
  te::Tensor a_tile = te::placeholder(p.a.t.shape(), p.dtype, "A_tile");
  te::Tensor b_tile = te::placeholder(p.b.t.shape(), p.dtype, "B_tile");
  std::vector<int64_t> shape(p.batch.size(), 1);
  shape.push_back(plan.mr);
  shape.push_back(plan.nr);
  te::Tensor desc = product_core(p, a_tile, b_tile, shape, "C_tile");
  const bool a_rows_are_k = p.a.rows_are_k;
  const size_t a_row = p.a.row_axis(), b_row = p.b.row_axis();
  const int64_t k = p.k, n = p.n, m = p.m;
  const bool integer = p.integer_tiles(), banded = plan.banded(p);
  const int64_t panel = p.b.panel;
  const bool panels = plan.kernel == ProductKernel::kPanels || plan.kernel == ProductKernel::kPanelsNT;
  const int64_t kc = panels ? panel_k_block(p, plan, target) : 0;
  auto emit = [plan, a_rows_are_k, a_row, b_row, k, n, m, banded, integer, panel, kc](
                  const std::vector<te::BufferSlice>& in, const te::BufferSlice& out) -> tir::Stmt {
    const te::BufferSlice& a = in.at(0);
    const te::BufferSlice& b = in.at(1);
    const size_t c_row = out.buffer->shape.size() - 2;
    // The last row band reaches past m in the core (whole bands) but not in A.
    const PrimExpr rows = banded ? tir::min(PrimExpr(plan.mr), PrimExpr(m) - a.origin[a_row]) : PrimExpr(plan.mr);
    if (plan.kernel == ProductKernel::kPanels) {
      // Packed panels are zero past n; a row-major b must not be read past its last column.
      PrimExpr cols = panel > 0 ? PrimExpr(plan.nr) : tir::min(PrimExpr(plan.nr), PrimExpr(n) - b.origin[b_row + 1]);
      PrimExpr b_k = panel > 0 ? PrimExpr(panel) : PrimExpr(b.stride(b_row));
      PrimExpr panel_stride = panel > 0 ? PrimExpr(b.stride(0)) : PrimExpr(KILN_PANEL_NR);
      return tir::Evaluate{tir::extern_call(
          "kiln_sgemm_panels_f32", {rows, cols, PrimExpr(k), a.pointer(), PrimExpr(a.stride(a_row)), b.pointer(), b_k,
                                    panel_stride, out.pointer(), PrimExpr(out.stride(c_row)), PrimExpr(kc)})};
    }
    if (plan.kernel == ProductKernel::kPanelsNT) {
      PrimExpr cols = tir::min(PrimExpr(plan.nr), PrimExpr(n) - b.origin[b_row]);
      return tir::Evaluate{
          tir::extern_call("kiln_sgemm_panels_nt_f32",
                           {rows, cols, PrimExpr(k), a.pointer(), PrimExpr(a.stride(a_row)), b.pointer(),
                            PrimExpr(b.stride(b_row)), out.pointer(), PrimExpr(out.stride(c_row)), PrimExpr(kc)})};
    }
    if (plan.kernel == ProductKernel::kNT)
      return nn::sgemm_nt_call(plan.mr, plan.nr, PrimExpr(k), a.pointer(), PrimExpr(a.stride(a_row)), b.pointer(),
                               PrimExpr(b.stride(b_row)), out.pointer(), PrimExpr(out.stride(c_row)));
    nn::NNTileCall t;
    t.mr = plan.mr;
    t.nr = plan.nr;
    t.k = PrimExpr(k);
    t.taps_h = t.taps_w = PrimExpr(1);
    t.a = a.pointer();
    t.a_row = PrimExpr(a.stride(a_rows_are_k ? a_row + 1 : a_row));
    t.a_k = PrimExpr(a.stride(a_rows_are_k ? a_row : a_row + 1));
    t.a_th = t.a_tw = PrimExpr(0);
    t.b = b.pointer();
    t.b_k = PrimExpr(b.stride(b_row));
    t.b_th = t.b_tw = PrimExpr(0);
    t.c = out.pointer();
    t.c_row = PrimExpr(out.stride(c_row));
    // Columns past n are not read: the last tile of b may end early.
    t.n = tir::min(PrimExpr(plan.nr), PrimExpr(n) - b.origin[b_row + 1]);
    return integer ? nn::igemm_nn_call(t) : nn::sgemm_nn_call(t);
  };
  return te::TensorIntrin{cat("product_tile_", plan.mr, "x", plan.nr), desc, emit};
}

// Any dtype, vectors too: a plain reduction in the reference kernels' arithmetic.
te::Tensor product_generic(const Product& p, const std::vector<int64_t>& out_shape, const std::string& name) {
  const DType acc = p.acc;
  te::IterVar k = te::reduce_axis(p.k, "k");
  const size_t batch_rank = p.batch.size();
  te::Tensor sum = te::compute(out_shape, name + (acc == p.out_dtype ? "" : "_acc"), [&](const te::Indices& i) {
    std::vector<PrimExpr> batch(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(batch_rank));
    size_t next = batch_rank;
    PrimExpr m = p.has_m() ? PrimExpr(i[next++]) : PrimExpr(0);
    PrimExpr n = p.has_n() ? PrimExpr(i[next]) : PrimExpr(0);
    PrimExpr x = tir::cast(acc, p.a.t(operand_indices(p.a, batch, m, k)));
    PrimExpr y = tir::cast(acc, p.b.t(operand_indices(p.b, batch, n, k)));
    return te::sum(x * y, {k});
  });
  if (acc == p.out_dtype) return sum;
  return te::compute(out_shape, name, [&](const te::Indices& i) {
    return nn::to_out_dtype(sum(std::vector<PrimExpr>(i.begin(), i.end())), p.out_dtype);
  });
}

std::vector<te::Tensor> product_compute(const Product& p, const ComputeInput& call) {
  const std::vector<int64_t>& out_shape = expect_tensor(call.out_type, "output").shape;
  const ProductPlan plan = plan_product(p, call.target);
  if (plan.kernel == ProductKernel::kGeneric) return {product_generic(p, out_shape, call.name)};
  std::vector<int64_t> core_shape = out_shape;
  core_shape.back() = plan.np;
  if (plan.banded(p)) core_shape[core_shape.size() - 2] = plan.mp;  // (panels: a matrix times a matrix)
  if (plan.np == p.n && plan.mp == p.m) return {product_core(p, p.a.t, p.b.t, core_shape, call.name)};
  te::Tensor core = product_core(p, p.a.t, p.b.t, core_shape, core_name(call.name));
  return {te::compute(out_shape, call.name,
                      [&](const te::Indices& i) { return core(std::vector<PrimExpr>(i.begin(), i.end())); })};
}

// The (row, column) loops after the batch loops split into tiles of rows x cols and ordered
// batch, tile loops (the larger operand's outside), rows, cols, then `tail`.
struct TiledLoops {
  std::vector<te::IterVar> outer;  // batch first
  te::IterVar rows, cols;
};

TiledLoops split_tiles(te::Stage& stage, size_t batch_rank, int64_t rows, int64_t cols, bool columns_outer,
                       const std::vector<te::IterVar>& tail = {}) {
  auto [mo, mi] = stage.split(stage.axis(batch_rank), rows);
  auto [no, ni] = stage.split(stage.axis(batch_rank + 1), cols);
  TiledLoops loops{{}, mi, ni};
  for (size_t d = 0; d < batch_rank; ++d) loops.outer.push_back(stage.axis(d));
  loops.outer.push_back(columns_outer ? no : mo);
  loops.outer.push_back(columns_outer ? mo : no);
  std::vector<te::IterVar> order = loops.outer;
  order.push_back(mi);
  order.push_back(ni);
  order.insert(order.end(), tail.begin(), tail.end());
  stage.reorder(order);
  return loops;
}

// Splits the core into micro-kernel tiles and tensorizes them; returns the loops outside the
// tiles, batch first.
std::vector<te::IterVar> tile_product(te::Stage& core, const Product& p, const ProductPlan& plan, bool columns_outer,
                                      const Target& target) {
  TiledLoops loops = split_tiles(core, p.batch.size(), plan.mr, plan.nr, columns_outer, {core.reduce_axis(0)});
  core.tensorize(loops.rows, product_tile_intrin(p, plan, target));
  return loops.outer;
}

void product_schedule(const Product& p, const ScheduleInput& in) {
  const ProductPlan plan = plan_product(p, in.target);
  if (plan.kernel == ProductKernel::kGeneric) {
    schedule_reduce(in);
    return;
  }
  const te::Tensor& out = in.anchor.at(0);
  te::Tensor core = out.op()->reduce ? out : nn::find_tensor(out, core_name(in.call.name));
  const int64_t work = nn::product(p.batch) * p.m * p.n * p.k;
  const bool parallel = work >= nn::kMinParallelWork;
  // The larger operand's tiles outside: each is read once, the smaller one stays in cache. Row
  // bands exist because A does not stay in cache: each band outside, over all the columns.
  const bool columns_outer = p.n >= p.m && !plan.banded(p);
  te::Tensor final_out = nn::single_output_like(in, out);
  if (!final_out.defined() || final_out.same_as(core)) {
    te::Stage& stage = in.schedule[core];
    std::vector<te::IterVar> outer = tile_product(stage, p, plan, columns_outer, in.target);
    te::IterVar tasks = nn::fuse_all(stage, outer);
    if (parallel) stage.parallel(tasks);
    for (const te::Tensor& o : in.outputs)
      if (!o.same_as(core)) schedule_injective_stage(in.schedule[o], in.target);
    if (!out.same_as(core) &&
        !std::any_of(in.outputs.begin(), in.outputs.end(), [&](const te::Tensor& o) { return o.same_as(out); }))
      in.schedule[out].compute_inline();
    return;
  }
  if (!out.same_as(core) && !out.same_as(final_out)) in.schedule[out].compute_inline();
  te::Stage& t = in.schedule[final_out];
  TiledLoops loops = split_tiles(t, p.batch.size(), plan.mb, plan.nb, columns_outer);
  t.vectorize(loops.cols);
  te::IterVar block = nn::fuse_all(t, loops.outer);
  if (parallel) t.parallel(block);
  te::Stage& core_stage = in.schedule[core];
  core_stage.compute_at(t, block);
  tile_product(core_stage, p, plan, columns_outer, in.target);
}

template <class T>
void register_product_strategy(OpDef& op, std::function<Product(const ComputeInput&, const T&)> product) {
  set_compute<T>(
      op, [product](const ComputeInput& call, const T& attrs) { return product_compute(product(call, attrs), call); });
  set_schedule<T>(
      op, [product](const ScheduleInput& in, const T& attrs) { product_schedule(product(in.call, attrs), in); });
}

}  // namespace

// 2 * output elements * the reduction length; `k_axis` counts from the end of argument 0.
double product_flops(const std::vector<Type>& args, const Type& out, int k_axis) {
  const TensorTypeNode* a = as_tensor(args.at(0));
  const TensorTypeNode* o = as_tensor(out);
  if (!a || !o || a->shape.size() < static_cast<size_t>(k_axis)) return 0;
  const int64_t k = a->shape[a->shape.size() - k_axis];
  return k < 0 ? 0 : 2.0 * known_elements(o->shape) * static_cast<double>(k);
}

template <class T>
void set_product_flops(OpDef& op) {
  op.set_flops<T>([](const std::vector<Type>& args, const Type& out, const T& attrs) {
    if constexpr (requires { attrs.transpose_a; }) return product_flops(args, out, attrs.transpose_a ? 2 : 1);
    return product_flops(args, out, 1);
  });
}

void register_nn_dense_ops(OpRegistry& registry) {
  registry.add("nn.dense")
      .describe("Fully connected layer: data (..., K) times the transpose of weight (units, K).")
      .arg("data")
      .arg("weight")
      .attrs<DenseAttrs>()
      .set_relation<DenseAttrs>(dense_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.dense_packed")
      .describe(
          "nn.dense with the weight packed in panels: data (..., K) times weight (ceil(units / block), K, block).")
      .arg("data")
      .arg("weight")
      .attrs<DensePackedAttrs>()
      .set_relation<DensePackedAttrs>(dense_packed_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.matmul")
      .describe("Matrix product of the last two axes with numpy batch broadcasting and optional transposes.")
      .arg("tensor_a")
      .arg("tensor_b")
      .attrs<MatmulAttrs>()
      .set_relation<MatmulAttrs>(matmul_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  registry.add("nn.batch_matmul")
      .describe("Batched matrix product of x (B, M, K) and y (B, N, K) (y transposed by default, as Relay).")
      .arg("x")
      .arg("y")
      .attrs<BatchMatmulAttrs>()
      .set_relation<BatchMatmulAttrs>(batch_matmul_relation)
      .set_pattern(OpPattern::kOutEWiseFusable);

  set_product_flops<DenseAttrs>(registry.get_mutable("nn.dense"));
  set_product_flops<DensePackedAttrs>(registry.get_mutable("nn.dense_packed"));
  set_product_flops<MatmulAttrs>(registry.get_mutable("nn.matmul"));
  set_product_flops<BatchMatmulAttrs>(registry.get_mutable("nn.batch_matmul"));
  register_product_strategy<DenseAttrs>(registry.get_mutable("nn.dense"), dense_product);
  register_product_strategy<DensePackedAttrs>(registry.get_mutable("nn.dense_packed"), dense_packed_product);
  register_product_strategy<MatmulAttrs>(registry.get_mutable("nn.matmul"),
                                         [](const ComputeInput& call, const MatmulAttrs& attrs) {
                                           return matmul_product(call, attrs.transpose_a, attrs.transpose_b);
                                         });
  register_product_strategy<BatchMatmulAttrs>(registry.get_mutable("nn.batch_matmul"),
                                              [](const ComputeInput& call, const BatchMatmulAttrs& attrs) {
                                                return matmul_product(call, attrs.transpose_a, attrs.transpose_b);
                                              });
}

}  // namespace kiln
