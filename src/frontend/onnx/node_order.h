// The order of a graph's nodes. ONNX requires nodes in topological order, but tools that
// assemble or edit graphs do not always write them so, and ONNX Runtime runs such graphs;
// kiln orders them itself rather than rejecting the model.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace kiln::frontend {

// Calls fn on every node of a graph and of the subgraphs in its attributes, with the
// node's index in its own graph.
void for_each_node(const onnx::GraphProto& graph, const std::function<void(const onnx::NodeProto&, int)>& fn);

// The names a node's subgraphs read (a superset of what they capture from outside).
std::set<std::string> names_read_inside(const onnx::NodeProto& node);

// Node indices in an order where every node follows the producers of the names it reads,
// its subgraphs' captures included: ONNX's own order when that is already sorted, else the
// lowest index first among the nodes ready. Names no node of the graph writes are taken as
// given from outside (checking them is the caller's job); the first writer of a name wins.
// A cycle is an error naming nodes on it.
std::vector<int> topological_order(const onnx::GraphProto& graph);

// True when every graph of the model, subgraphs included, lists its nodes in topological order.
bool nodes_sorted(const onnx::GraphProto& graph);

// Reorders the nodes of a graph and of its subgraphs topologically.
void sort_nodes(onnx::GraphProto& graph);

}  // namespace kiln::frontend
