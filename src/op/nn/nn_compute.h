// Tensor-expression helpers shared by the compute-heavy nn ops (conv.cc, dense.cc, pool.cc):
// the arithmetic type of the reference kernels, the calls of the register-tile micro-kernels
// of kiln/runtime/microkernels.h, and small schedule utilities.
#pragma once

#include <string>
#include <vector>

#include "kiln/op/strategy.h"
#include "kiln/te/schedule.h"
#include "kiln/te/tensor.h"

namespace kiln::nn {

// The type the reference kernels compute in for tensors of `dtype` (compute_view.h): float for
// float32, double for float64 and integers.
DType accumulate_dtype(DType dtype);
// `value` (of the accumulate dtype) stored as `out`, as the reference kernels' OutView does:
// integers round to nearest and saturate, NaN becomes 0.
tir::PrimExpr to_out_dtype(const tir::PrimExpr& value, DType out);

// The call of kiln_sgemm_nn_f32_<mr>x<nr>: c[i, j] += sum over taps (r, s) and p of
// a[i*a_row + p*a_k + r*a_th + s*a_tw] * b[p*b_k + r*b_th + s*b_tw + j] for j < n.
struct NNTileCall {
  int64_t mr = 0, nr = 0;
  tir::PrimExpr k, taps_h, taps_w;
  tir::PrimExpr a, a_row, a_k, a_th, a_tw;
  tir::PrimExpr b, b_k, b_th, b_tw;
  tir::PrimExpr c, c_row, n;
};
tir::Stmt sgemm_nn_call(const NNTileCall& t);
// The same contract on int16 operands and an int32 C whose sums wrap: kiln_igemm_nn_s16_<mr>x<nr>.
tir::Stmt igemm_nn_call(const NNTileCall& t);
// The call of kiln_sgemm_nt_f32_<mr>x<nr>: c[i*ldc + j] += sum_p a[i*lda + p] * b[j*ldb + p].
tir::Stmt sgemm_nt_call(int64_t mr, int64_t nr, tir::PrimExpr k, tir::PrimExpr a, tir::PrimExpr lda, tir::PrimExpr b,
                        tir::PrimExpr ldb, tir::PrimExpr c, tir::PrimExpr ldc);
// Register tiles the micro-kernel header defines.
bool has_nn_tile(int64_t mr, int64_t nr);
// Also the float-only tiles (12 x 32).
bool has_sgemm_nn_tile(int64_t mr, int64_t nr);
bool has_nt_tile(int64_t mr, int64_t nr);

// The largest of `options` (in the order given) that divides `extent`; 0 when none does.
int64_t first_divisor(int64_t extent, std::initializer_list<int64_t> options);
int64_t round_up(int64_t value, int64_t multiple);
int64_t product(const std::vector<int64_t>& shape);

// The tensor named `name` among `root` and everything it reads; undefined when absent.
te::Tensor find_tensor(const te::Tensor& root, const std::string& name);
// The only output of the group, when it has the anchor's shape; undefined otherwise.
te::Tensor single_output_like(const ScheduleInput& in, const te::Tensor& anchor_out);

// Ops whose compiled form is one call of a whole-op micro-kernel (nn.conv2d_winograd,
// nn.conv2d_pointwise_depthwise) compute a stand-in that names the operands and the output, and
// their schedules tensorize its nest. The stand-in reads the operands in order, so the call
// receives them in that order. Operands in memory already (placeholders) are read at one element:
// the stand-in is element-wise and the output needs no initialisation. A computed operand (a
// fused producer's copy) is read whole by a reduction, so that bound inference computes all of
// it; the lowering then zeroes the output first, a cost only this rare case pays.
te::Tensor stand_in(const std::vector<int64_t>& out_shape, const std::vector<te::Tensor>& operands,
                    const std::string& name, bool whole);
bool all_placeholders(const std::vector<te::Tensor>& operands);
// The stand-in over placeholders of the call's argument shapes, with `shape`: the description a
// tensorize intrinsic matches against the call's stand-in (whole when the call's is).
te::Tensor stand_in_description(const ComputeInput& call, const std::vector<int64_t>& shape, const std::string& name);
// Argument i of the call, or, when an op fused before the call computes it, a copy of it into a
// buffer of its own (the producer inlines into the copy), since the kernel reads it from memory.
te::Tensor operand_in_memory(const ComputeInput& call, size_t i);
// Why `kernel` cannot compute a call of these types: not all float32, or not all static and
// non-empty; "" when it can.
std::string float32_static_reason(const std::vector<Type>& arg_types, const Type& out_type, const std::string& kernel);
// Schedules the operand copies and the group's element-wise tail around the stand-in `out`.
void schedule_around_stand_in(const ScheduleInput& in, const te::Tensor& out);

// Fuses the consecutive leaves `leaves` (outer first) into one loop.
te::IterVar fuse_all(te::Stage& stage, const std::vector<te::IterVar>& leaves);
// The axes of `stage` before `axis` fused into rows of `row_length` elements and split into tasks
// of whole rows (softmax, layer_norm): a divisor of the rows, since row kernels cannot sit under
// a guard, of at most 16384 elements that leaves at least 16 tasks; parallel from 16384
// elements in all. Returns the row within its task.
te::IterVar split_row_tasks(te::Stage& stage, size_t axis, int64_t row_length);
// Below this many multiply-adds (about 20-50 us on one core) a kernel runs on one thread:
// splitting it gains less than waking a sleeping worker and joining it costs, and a step of
// a recurrent cell (h by R: 1x256x1024 = 2^18) stays on the core whose cache holds R.
constexpr int64_t kMinParallelWork = 1 << 19;
// A depthwise multiply-add costs about four of a dense convolution's (one load per FMA, no
// reuse across output channels): weighed so, a smaller depthwise layer is already worth two
// threads.
constexpr int64_t kDepthwiseCostPerMac = 4;

}  // namespace kiln::nn
