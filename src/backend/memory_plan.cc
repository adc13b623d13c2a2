#include "backend/memory_plan.h"

#include <algorithm>
#include <map>

#include "kiln/runtime/dtype.h"

namespace kiln::backend {
namespace {

// Storage ids are numbered across devices, but each block belongs to one device and is
// reused only there: devices do not share memory.
class StoragePool {
 public:
  int64_t fresh(int64_t device, size_t bytes) {
    sizes_.push_back(bytes);
    devices_.push_back(device);
    return static_cast<int64_t>(sizes_.size()) - 1;
  }

  int64_t take(int64_t device, size_t bytes) {
    std::multimap<size_t, int64_t>& free = free_[device];
    if (free.empty()) return fresh(device, bytes);
    auto fit = free.lower_bound(bytes);
    if (fit == free.end()) fit = std::prev(free.end());  // the largest, grown to fit
    int64_t id = fit->second;
    free.erase(fit);
    sizes_[static_cast<size_t>(id)] = std::max(sizes_[static_cast<size_t>(id)], bytes);
    return id;
  }

  void release(int64_t id) { free_[devices_[static_cast<size_t>(id)]].emplace(sizes_[static_cast<size_t>(id)], id); }

 private:
  std::vector<size_t> sizes_;
  std::vector<int64_t> devices_;                            // per storage id
  std::map<int64_t, std::multimap<size_t, int64_t>> free_;  // per device: size -> storage id
};

size_t entry_bytes(const GraphPlan& plan, size_t entry) {
  return static_cast<size_t>(num_elements(plan.shape[entry])) * dtype_bytes(parse_dtype(plan.dltype[entry]));
}

// The entry whose storage each entry uses: itself, or for the output of an alias node (a
// reshape, kAliasFuncName) its input's.
std::vector<size_t> storage_owners(const GraphPlan& plan) {
  std::vector<size_t> owner(plan.num_entries());
  for (size_t entry = 0; entry < owner.size(); ++entry) owner[entry] = entry;
  for (size_t n = 0; n < plan.nodes.size(); ++n)
    if (plan.nodes[n].func_name() == kAliasFuncName)
      owner[plan.entry_id(static_cast<int64_t>(n), 0)] = owner[plan.entry_id(plan.nodes[n].inputs.at(0))];
  return owner;
}

}  // namespace

void plan_memory(GraphPlan& plan) {
  // Each sub-graph has storage of its own: a branch runs while its node's inputs are live.
  for (GraphPlan& subgraph : plan.subgraphs) plan_memory(subgraph);
  const size_t num_entries = plan.num_entries();
  // Readers and liveness are counted per storage owner: a block is free once neither the
  // entry nor any alias of it has readers left.
  const std::vector<size_t> owner = storage_owners(plan);
  std::vector<int64_t> readers(num_entries, 0);
  for (const GraphNode& node : plan.nodes)
    for (const GraphEntry& in : node.inputs) ++readers[owner[plan.entry_id(in)]];
  std::vector<bool> kept(num_entries, false);  // graph outputs live to the end, inputs and parameters always
  for (const GraphEntry& head : plan.heads) kept[owner[plan.entry_id(head)]] = true;
  for (size_t n = 0; n < plan.nodes.size(); ++n)
    if (plan.nodes[n].is_variable()) kept[plan.entry_id(static_cast<int64_t>(n), 0)] = true;

  plan.storage_id.assign(num_entries, -1);
  auto device_of = [&plan](size_t entry) { return plan.device_index.empty() ? 1 : plan.device_index[entry]; };
  StoragePool pool;
  auto release_if_dead = [&](size_t entry) {
    if (readers[entry] == 0 && !kept[entry] && plan.storage_id[entry] >= 0) pool.release(plan.storage_id[entry]);
  };
  for (size_t n = 0; n < plan.nodes.size(); ++n) {
    const GraphNode& node = plan.nodes[n];
    const auto id = static_cast<int64_t>(n);
    if (node.is_variable()) {
      // A sub-graph input of run-time shape is bound to its parent's tensor, not stored.
      const size_t entry = plan.entry_id(id, 0);
      if (!plan.is_dynamic(entry)) plan.storage_id[entry] = pool.fresh(device_of(entry), entry_bytes(plan, entry));
      continue;
    }
    for (int64_t i = 0; i < plan.num_node_outputs(id); ++i) {
      const size_t entry = plan.entry_id(id, i);
      if (owner[entry] != entry)
        plan.storage_id[entry] = plan.storage_id[owner[entry]];
      else if (!plan.is_dynamic(entry))
        plan.storage_id[entry] = pool.take(device_of(entry), entry_bytes(plan, entry));
    }
    for (const GraphEntry& in : node.inputs) {
      const size_t entry = owner[plan.entry_id(in)];
      --readers[entry];
      release_if_dead(entry);
    }
    for (int64_t i = 0; i < plan.num_node_outputs(id); ++i) release_if_dead(owner[plan.entry_id(id, i)]);
  }
}

}  // namespace kiln::backend
