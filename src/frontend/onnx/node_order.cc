#include "frontend/onnx/node_order.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "frontend/onnx/model_proto.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

namespace {

// How many nodes a cycle report names.
constexpr size_t kNodesNamed = 3;

template <class Fn>
void for_each_subgraph(const onnx::NodeProto& node, Fn fn) {
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) fn(attr.g());
    for (const auto& g : attr.graphs()) fn(g);
  }
}

// The producer of every name written by a node of the graph (the first, if written twice).
std::unordered_map<std::string, int> producers(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& out : graph.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  return producer;
}

// The nodes left waiting are on a cycle or downstream of one; dropping, over and over, those
// that no waiting node reads leaves the cycles, which the message names.
std::string cycle_message(const onnx::GraphProto& graph, std::vector<int> waiting_for,
                          const std::vector<std::vector<int>>& readers, size_t ordered) {
  const size_t n = waiting_for.size();
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (size_t i = 0; i < n; ++i) {
      if (waiting_for[i] == 0) continue;
      bool read = std::any_of(readers[i].begin(), readers[i].end(),
                              [&](int r) { return waiting_for[static_cast<size_t>(r)] > 0; });
      if (!read) {
        waiting_for[i] = 0;
        dropped = true;
      }
    }
  }
  std::vector<std::string> stuck;
  for (int i = 0; i < graph.node_size() && stuck.size() < kNodesNamed; ++i)
    if (waiting_for[static_cast<size_t>(i)] > 0) stuck.push_back("'" + node_label(graph.node(i), i) + "'");
  std::string where = graph.name().empty() ? "the graph" : cat("graph '", graph.name(), "'");
  return cat(where, " has a cycle: ", static_cast<size_t>(graph.node_size()) - ordered,
             " nodes wait on each other's outputs; on the cycle: ", join(stuck));
}

}  // namespace

void for_each_node(const onnx::GraphProto& graph, const std::function<void(const onnx::NodeProto&, int)>& fn) {
  for (int i = 0; i < graph.node_size(); ++i) {
    fn(graph.node(i), i);
    for_each_subgraph(graph.node(i), [&](const onnx::GraphProto& g) { for_each_node(g, fn); });
  }
}

std::set<std::string> names_read_inside(const onnx::NodeProto& node) {
  std::set<std::string> names;
  for_each_subgraph(node, [&](const onnx::GraphProto& g) {
    for_each_node(g, [&](const onnx::NodeProto& n, int) { names.insert(n.input().begin(), n.input().end()); });
    for (const auto& out : g.output()) names.insert(out.name());
  });
  names.erase("");
  return names;
}

std::vector<int> topological_order(const onnx::GraphProto& graph) {
  const int n = graph.node_size();
  const std::unordered_map<std::string, int> producer = producers(graph);
  std::vector<int> waiting_for(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> readers(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // A node reading its own output is a cycle; its body reading that name is not (a Loop's
    // body may define a name the node also writes).
    std::set<std::string> names(graph.node(i).input().begin(), graph.node(i).input().end());
    for (const auto& name : names_read_inside(graph.node(i))) {
      auto p = producer.find(name);
      if (p != producer.end() && p->second != i) names.insert(name);
    }
    for (const auto& name : names) {
      auto p = producer.find(name);
      if (p == producer.end()) continue;
      ++waiting_for[static_cast<size_t>(i)];
      readers[static_cast<size_t>(p->second)].push_back(i);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (waiting_for[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int r : readers[static_cast<size_t>(i)])
      if (--waiting_for[static_cast<size_t>(r)] == 0) ready.push(r);
  }
  if (static_cast<int>(order.size()) < n) throw Error(cycle_message(graph, waiting_for, readers, order.size()));
  return order;
}

bool nodes_sorted(const onnx::GraphProto& graph) {
  std::vector<int> order = topological_order(graph);
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int>(i)) return false;
  for (const auto& node : graph.node()) {
    bool sorted = true;
    for_each_subgraph(node, [&](const onnx::GraphProto& g) { sorted = sorted && nodes_sorted(g); });
    if (!sorted) return false;
  }
  return true;
}

void sort_nodes(onnx::GraphProto& graph) {
  std::vector<int> order = topological_order(graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) sorted.Add()->Swap(graph.mutable_node(i));
  graph.mutable_node()->Swap(&sorted);
  for (auto& node : *graph.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) sort_nodes(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) sort_nodes(g);
    }
}

}  // namespace kiln::frontend
