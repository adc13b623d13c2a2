// How an op is compiled: its compute definition (a tensor expression per output), the
// schedule used when the op anchors a fused group, and the calls generated code cannot make
// exact. They are part of the op's definition (OpDef::strategy), set by the op's own file
// under src/op/ right after the op is added, in the same register_*_ops() function. An op
// without a compute runs its reference kernel in compiled artifacts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/attrs/reflect.h"
#include "kiln/ir/op.h"
#include "kiln/ir/type.h"
#include "kiln/runtime/attrs.h"
#include "kiln/te/schedule.h"
#include "kiln/te/tensor.h"

namespace kiln {

// What the generated code may assume about the machine.
struct Target {
  std::string kind = "c";
  int opt_level = 3;
  // float32 lanes of the widest vector register the C compiler targets (8 for AVX2).
  int vector_lanes = 8;
  // Data cache sizes per core, for cache blocking (the panel GEMM's k-blocks). host() reads them
  // from the machine; KILN_L1D_BYTES / KILN_L2_BYTES in the environment override them.
  int64_t l1_bytes = 32 * 1024;
  int64_t l2_bytes = 1024 * 1024;
  // The host this process runs on.
  static Target host();
};

// One call of the op inside a fused group. `args` are the tensors of its arguments
// (placeholders or computes of earlier calls); `attrs` are normalised (defaults filled in).
struct ComputeInput {
  std::vector<te::Tensor> args;
  std::vector<Type> arg_types;
  Type out_type;
  Attrs attrs;
  std::string name;  // base name for the tensors it creates
  // The machine the code is for: a compute whose tensors' shapes depend on cache blocking (the
  // panel GEMM's row bands) decides them as its schedule will.
  Target target;
};

// One tensor per output: a tuple-typed result gives one per field.
using ComputeFn = std::function<std::vector<te::Tensor>(const ComputeInput& call)>;

// Schedules a whole fused group whose anchor (the op of highest pattern, the last such one
// when several tie) is this op. `outputs` are the group's outputs, `anchor` the anchor
// call's own tensors. Stages of injective ops not scheduled here are inlined beforehand.
struct ScheduleInput {
  te::Schedule& schedule;
  const std::vector<te::Tensor>& outputs;
  const std::vector<te::Tensor>& anchor;
  const ComputeInput& call;
  const Target& target;
};
using ScheduleFn = std::function<void(const ScheduleInput& in)>;

// Why generated code cannot match the reference kernel for a call with these argument and
// result types (e.g. integer division, whose division by zero the reference kernel reports),
// or "" when it can. Such calls run on the reference kernel.
using ComputeLimit =
    std::function<std::string(const std::vector<Type>& arg_types, const Type& out_type, const Attrs& attrs)>;

struct OpStrategy {
  ComputeFn compute;
  ComputeLimit limit;  // empty: every call the type relation accepts compiles
  // Empty: the default for the op's pattern (schedule_injective or schedule_reduce).
  ScheduleFn schedule;
};

// The compute and schedule of `op` live in its definition (OpDef::strategy), set by the op's
// own file right after the op is added. Throws if the op already has a compute.
void set_compute(OpDef& op, ComputeFn compute, ComputeLimit limit = {});
// A schedule needs the op's compute first.
void set_schedule(OpDef& op, ScheduleFn schedule);
// The same, reading the call's attributes as the op's declared struct T.
template <class T>
void set_compute(OpDef& op, std::function<std::vector<te::Tensor>(const ComputeInput& call, const T& attrs)> compute,
                 ComputeLimit limit = {}) {
  set_compute(
      op,
      [compute = std::move(compute), name = op.name](const ComputeInput& call) {
        return compute(call, attrs_from<T>(call.attrs, name));
      },
      std::move(limit));
}
template <class T>
void set_schedule(OpDef& op, std::function<void(const ScheduleInput& in, const T& attrs)> schedule) {
  set_schedule(op, [schedule = std::move(schedule), name = op.name](const ScheduleInput& in) {
    schedule(in, attrs_from<T>(in.call.attrs, name));
  });
}
// nullptr when the op has no compute definition.
const OpStrategy* find_strategy(const OpDef& op);

// Default schedules (src/op/schedule.cc). Injective: every output's loops fused, split by the
// vector width, outer part parallel, inner part vectorised. Reduce: the reduction computed
// at root with its data-parallel loops parallel, outputs as injective.
void schedule_injective(const ScheduleInput& in);
// A ComputeLimit for ops whose computes are exact only on float data.
std::string only_float_data(const std::vector<Type>& arg_types, const Type& out_type, const Attrs& attrs);
void schedule_reduce(const ScheduleInput& in);
// Parallel + vectorised loops for one stage computed at root (helper for op schedules).
void schedule_injective_stage(te::Stage& stage, const Target& target);
// Below this many elements a copy's parallel loop costs more in hand-off than it saves.
constexpr int64_t kMinParallelElements = 1 << 14;

}  // namespace kiln
