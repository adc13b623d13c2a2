// GraphExecutor's loops: a "kiln_loop" node runs its body sub-graph once per iteration, the
// carried values alternating between two blocks the step keeps, scan slices stacked into the
// node's output.
#include <algorithm>
#include <cstring>
#include <utility>

#include "kiln/runtime/graph_executor.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "runtime/graph_executor_internal.h"
#include "runtime/graph_json.h"

namespace kiln {

namespace {

// A scan output of a loop: each iteration's slice appended along axis 0, into the node's
// planned tensor when the number of iterations is known, else into the entry's block, kept by
// the executor across executions and grown geometrically (the devices' memory is
// host-addressable, as the reference kernels assume). A slice of run-time shape takes the
// shape of the first iteration's, which every other must have.
class ScanOutput {
 public:
  ScanOutput(NDArray planned, NDArray& block, Shape slice, DType dtype, int64_t expected_iterations, Device& device)
      : planned_(std::move(planned)),
        block_(block),
        slice_(std::move(slice)),
        dtype_(dtype),
        expected_(std::clamp<int64_t>(expected_iterations, 1, 64)),
        device_(device) {
    if (planned_.defined())
      capacity_ = planned_.shape().empty() ? 0 : planned_.shape()[0];
    else if (is_static(slice_))
      size_slices(slice_);
  }

  void append(const NDArray& slice) {
    if (!sized_) size_slices(slice.shape());
    if (slice.shape() != slice_)
      throw Error("a loop's scan output changes shape across iterations")
          .expected(shape_str(slice_), shape_str(slice.shape()));
    if (count_ == capacity_) {
      check(!planned_.defined(), "a loop ran more iterations than its scan output holds (", capacity_, ")");
      grow(capacity_ * 2);
    }
    if (slice_bytes_)
      std::memcpy(static_cast<uint8_t*>(buffer().raw()) + count_ * slice_bytes_, slice.raw(), slice_bytes_);
    ++count_;
  }

  // The stacked slices: [iterations, ...slice] (unknown extents of a slice never made are 0).
  NDArray result() const {
    if (planned_.defined()) {
      check(count_ == capacity_, "a loop ran ", count_, " iterations where its type promised ", capacity_);
      return planned_;
    }
    Shape shape = slice_;
    for (int64_t& d : shape) d = std::max<int64_t>(d, 0);
    shape.insert(shape.begin(), count_);
    if (!block_.defined()) block_ = device_.allocate(1);
    return block_.view(shape, dtype_);
  }

 private:
  static bool is_static(const Shape& shape) {
    return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
  }

  NDArray& buffer() { return planned_.defined() ? planned_ : block_; }

  void size_slices(const Shape& slice) {
    slice_ = slice;
    slice_bytes_ = tensor_bytes(slice_, dtype_);
    sized_ = true;
    if (!planned_.defined()) grow(expected_);
  }

  // Keeps the slices appended so far; a block already large enough is reused as it is.
  void grow(int64_t capacity) {
    const NDArray kept = block_;  // shares the old memory until the slices are copied over
    reserve_block(block_, static_cast<size_t>(capacity) * slice_bytes_, device_);
    if (block_.raw() != kept.raw() && count_ && slice_bytes_)
      std::memcpy(block_.raw(), kept.raw(), static_cast<size_t>(count_) * slice_bytes_);
    capacity_ = slice_bytes_ ? static_cast<int64_t>(block_.nbytes() / slice_bytes_) : capacity;
  }

  NDArray planned_;
  NDArray& block_;
  Shape slice_;
  DType dtype_;
  int64_t expected_;
  size_t slice_bytes_ = 0;
  bool sized_ = false;
  Device& device_;
  int64_t capacity_ = 0, count_ = 0;
};

// Whether the body's carried head k may be written straight into the loop's block: not when it
// is also something else of the body (one of its inputs, a parameter, another head), whose
// tensor the body does not write, nor when its shape is known only at run time.
bool writes_carried_in_place(const GraphPlan& body, const std::vector<size_t>& heads, const std::vector<size_t>& inputs,
                             const NDArray& param, size_t head) {
  return !param.defined() && !body.is_dynamic(head) && std::count(heads.begin(), heads.end(), head) == 1 &&
         std::find(inputs.begin(), inputs.end(), head) == inputs.end();
}

}  // namespace

// The body runs on storage planned and allocated once (its executor). Carried values are
// double-buffered: iteration i writes its carried outputs into blocks of parity i % 2, which
// the next iteration reads as its inputs, so nothing is copied between iterations where the
// body can write a carried value in place; only the final values are copied into the node's
// outputs. The blocks are kept across executions and grow when a carried value needs more.
void GraphExecutor::run_loop(const Artifact::Step& step, BoundStep& bound) {
  GraphExecutor& body = *subgraph_executors_[step.body_graph];
  const int64_t trip_count = read_int_scalar(step.input_entries[0]);
  bool cond = read_int_scalar(step.input_entries[1]) != 0;
  std::vector<NDArray> carried = start_loop(step, bound, body);
  std::vector<ScanOutput> scans;
  const size_t n = step.num_carried;
  for (size_t j = 0; n + j < step.output_entries.size(); ++j) {
    const size_t out = step.output_entries[n + j], head = body.artifact_->output_entries_[n + 1 + j];
    const GraphPlan& b = body.artifact_->graph();
    scans.emplace_back(artifact_->graph().is_dynamic(out) ? NDArray() : entries_[out], dynamic_blocks_[out],
                       b.shape[head], parse_dtype(b.dltype[head]), trip_count, device_of_entry(out));
  }
  for (int64_t i = 0; i < trip_count && cond; ++i) {
    try {
      cond = run_iteration(bound, body, i, carried);
    } catch (Error& e) {
      throw e.file(body.artifact_->origin()).node(cat(step.node_name, " iteration ", i));
    }
    for (size_t j = 0; j < scans.size(); ++j)
      scans[j].append(body.entries_[body.artifact_->output_entries_[n + 1 + j]]);
  }
  finish_loop(step, carried);
  for (size_t j = 0; j < scans.size(); ++j) {
    NDArray result = scans[j].result();  // checks the count against a planned one
    if (artifact_->graph().is_dynamic(step.output_entries[n + j]))
      entries_[step.output_entries[n + j]] = std::move(result);
  }
}

// Binds the body's loop-invariant inputs and its iteration and condition inputs; returns the
// carried values' initial tensors.
std::vector<NDArray> GraphExecutor::start_loop(const Artifact::Step& step, BoundStep& bound, GraphExecutor& body) {
  const Artifact& b = *body.artifact_;
  const size_t n = step.num_carried;
  for (size_t k = 2 + n; k < step.input_entries.size(); ++k) body.bind_input(k, entries_[step.input_entries[k]]);
  if (!bound.iteration.defined()) {
    bound.iteration = NDArray::empty(b.inputs()[0].shape, DType::kInt64);
    bound.body_cond = NDArray::empty(b.inputs()[1].shape, DType::kBool);
    bound.carried_blocks.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const size_t head = b.output_entries_[k + 1];
      bound.carried_in_place.push_back(
          writes_carried_in_place(b.graph(), b.output_entries_, b.input_entries_, b.params_by_entry_[head], head));
    }
  }
  *bound.body_cond.data<bool>() = true;
  body.bind_input(0, bound.iteration);
  body.bind_input(1, bound.body_cond);
  std::vector<NDArray> carried(n);
  for (size_t k = 0; k < n; ++k) carried[k] = entries_[step.input_entries[2 + k]];
  return carried;
}

// Runs iteration i: reads `carried`, leaves the values it carries on in it; returns the
// body's condition.
bool GraphExecutor::run_iteration(BoundStep& bound, GraphExecutor& body, int64_t i, std::vector<NDArray>& carried) {
  const Artifact& b = *body.artifact_;
  const GraphPlan& bg = b.graph();
  *bound.iteration.data<int64_t>() = i;
  const std::vector<bool>& in_place = bound.carried_in_place;
  for (size_t k = 0; k < carried.size(); ++k) {
    const size_t head = b.output_entries_[k + 1];
    body.bind_input(2 + k, carried[k]);
    if (in_place[k]) {
      const DType dtype = parse_dtype(bg.dltype[head]);
      NDArray& block = reserve_block(bound.carried_blocks[k][i % 2], tensor_bytes(bg.shape[head], dtype),
                                     body.device_of_entry(head));
      body.rebind_entry(head, block.view(bg.shape[head], dtype));
    }
  }
  body.run_steps(nullptr);
  for (size_t k = 0; k < carried.size(); ++k) {
    const size_t head = b.output_entries_[k + 1];
    const NDArray& produced = body.entries_[head];
    if (!in_place[k]) {
      Device& device = body.device_of_entry(head);
      NDArray next = reserve_block(bound.carried_blocks[k][i % 2], produced.nbytes(), device)
                         .view(produced.shape(), produced.dtype());
      device.copy_in(produced, next);
      carried[k] = std::move(next);
    } else {
      carried[k] = produced;
    }
  }
  return body.read_int_scalar(b.output_entries_[0]) != 0;
}

// Copies the final carried values into the node's outputs.
void GraphExecutor::finish_loop(const Artifact::Step& step, const std::vector<NDArray>& carried) {
  const GraphPlan& g = artifact_->graph();
  for (size_t k = 0; k < carried.size(); ++k) {
    const size_t out = step.output_entries[k];
    if (g.is_dynamic(out)) entries_[out] = dynamic_tensor(out, carried[k].shape(), carried[k].dtype());
    device_of_entry(out).copy_in(carried[k], entries_[out]);
  }
}

}  // namespace kiln
