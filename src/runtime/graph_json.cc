#include "runtime/graph_json.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "kiln/runtime/dtype.h"
#include "kiln/runtime/kernel_abi.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"
#include "runtime/file_io.h"

namespace kiln {

namespace {

using Json = nlohmann::ordered_json;

Error field_error(const std::string& field, const std::string& message) { return Error(field + ": " + message); }

std::string kind_of(const Json& json) { return json.type_name(); }

const Json& member(const Json& object, const char* key, const std::string& field) {
  const auto it = object.find(key);
  if (it == object.end()) throw field_error(field, cat("missing key \"", key, "\""));
  return *it;
}

const Json& expect_array(const Json& json, const std::string& field) {
  if (!json.is_array()) throw field_error(field, "wrong JSON type").expected("an array", kind_of(json));
  return json;
}

int64_t to_int(const Json& json, const std::string& field) {
  if (json.is_number_integer() && !(json.is_number_unsigned() && json.get<uint64_t>() > uint64_t{INT64_MAX}))
    return json.get<int64_t>();
  throw field_error(field, "wrong JSON type").expected("an integer", json.dump());
}

std::string to_string(const Json& json, const std::string& field) {
  if (!json.is_string()) throw field_error(field, "wrong JSON type").expected("a string", kind_of(json));
  return json.get<std::string>();
}

std::vector<int64_t> to_ints(const Json& json, const std::string& field) {
  std::vector<int64_t> values;
  for (size_t i = 0; i < expect_array(json, field).size(); ++i)
    values.push_back(to_int(json[i], cat(field, "[", i, "]")));
  return values;
}

std::vector<std::string> to_strings(const Json& json, const std::string& field) {
  std::vector<std::string> values;
  for (size_t i = 0; i < expect_array(json, field).size(); ++i)
    values.push_back(to_string(json[i], cat(field, "[", i, "]")));
  return values;
}

GraphEntry to_entry(const Json& json, const std::string& field) {
  std::vector<int64_t> parts = to_ints(json, field);
  if (parts.size() != 2 && parts.size() != 3)
    throw field_error(field, "an entry is [node, index, version]").expected("2 or 3 integers", cat(parts.size()));
  return GraphEntry{parts[0], parts[1], parts.size() == 3 ? parts[2] : 0};
}

std::vector<GraphEntry> to_entries(const Json& json, const std::string& field) {
  std::vector<GraphEntry> entries;
  for (size_t i = 0; i < expect_array(json, field).size(); ++i)
    entries.push_back(to_entry(json[i], cat(field, "[", i, "]")));
  return entries;
}

// TVM keeps node attributes as strings; numbers written by other tools are accepted as their text.
std::string attr_text(const Json& json, const std::string& field) {
  if (json.is_string()) return json.get<std::string>();
  if (json.is_number() || json.is_boolean()) return json.dump();
  throw field_error(field, "wrong JSON type").expected("a string", kind_of(json));
}

GraphNode to_node(const Json& json, const std::string& field) {
  if (!json.is_object()) throw field_error(field, "wrong JSON type").expected("an object", kind_of(json));
  GraphNode node;
  node.op = to_string(member(json, "op", field), field + ".op");
  node.name = to_string(member(json, "name", field), field + ".name");
  if (json.contains("inputs")) node.inputs = to_entries(json["inputs"], field + ".inputs");
  // Older TVM graphs call the attributes "param".
  const char* attrs_key = json.contains("attrs") ? "attrs" : json.contains("param") ? "param" : nullptr;
  if (attrs_key) {
    const Json& attrs = json[attrs_key];
    const std::string attrs_field = cat(field, ".", attrs_key);
    if (!attrs.is_object()) throw field_error(attrs_field, "wrong JSON type").expected("an object", kind_of(attrs));
    for (const auto& [key, value] : attrs.items()) node.attrs[key] = attr_text(value, attrs_field + "." + key);
  }
  return node;
}

// attrs.<key> is ["<tag>", [values...]].
const Json& typed_list(const Json& attrs, const char* key, std::string_view tag, const std::string& field) {
  const Json& pair = expect_array(member(attrs, key, field), field + "." + key);
  const std::string pair_field = cat(field, ".", key);
  if (pair.size() != 2 || !pair[0].is_string() || pair[0].get<std::string>() != tag)
    throw field_error(pair_field, "malformed attribute list").expected(cat("[\"", tag, "\", [...]]"), pair.dump());
  return expect_array(pair[1], pair_field + "[1]");
}

void parse_entry_attrs(const Json& attrs, GraphPlan& plan) {
  const std::string field = "attrs";
  if (!attrs.is_object()) throw field_error(field, "wrong JSON type").expected("an object", kind_of(attrs));
  plan.dltype = to_strings(typed_list(attrs, "dltype", "list_str", field), "attrs.dltype[1]");
  const Json& shapes = typed_list(attrs, "shape", "list_shape", field);
  for (size_t i = 0; i < shapes.size(); ++i) plan.shape.push_back(to_ints(shapes[i], cat("attrs.shape[1][", i, "]")));
  plan.storage_id = to_ints(typed_list(attrs, "storage_id", "list_int", field), "attrs.storage_id[1]");
  if (attrs.contains("device_index"))
    plan.device_index = to_ints(typed_list(attrs, "device_index", "list_int", field), "attrs.device_index[1]");
}

// Sub-graphs nest (an If in a branch); a hostile file must not nest them until the stack ends.
constexpr int kMaxSubgraphDepth = 64;

GraphPlan plan_from_json(const Json& json, int depth);

void parse_kiln_section(const Json& kiln, GraphPlan& plan, int depth) {
  if (!kiln.is_object()) throw field_error("kiln", "wrong JSON type").expected("an object", kind_of(kiln));
  if (kiln.contains("input_names")) plan.input_names = to_strings(kiln["input_names"], "kiln.input_names");
  if (kiln.contains("output_names")) plan.output_names = to_strings(kiln["output_names"], "kiln.output_names");
  if (kiln.contains("abi_version")) plan.abi_version = to_int(kiln["abi_version"], "kiln.abi_version");
  if (!kiln.contains("subgraphs")) return;
  const Json& subgraphs = expect_array(kiln["subgraphs"], "kiln.subgraphs");
  if (!subgraphs.empty() && depth >= kMaxSubgraphDepth)
    throw field_error("kiln.subgraphs", "sub-graphs nested too deep")
        .expected(cat("at most ", kMaxSubgraphDepth), "more");
  for (size_t i = 0; i < subgraphs.size(); ++i) {
    try {
      plan.subgraphs.push_back(plan_from_json(subgraphs[i], depth + 1));
    } catch (Error& e) {
      throw e.node(cat("kiln.subgraphs[", i, "]"));
    }
  }
}

GraphPlan plan_from_json(const Json& json, int depth) {
  if (!json.is_object()) throw Error("graph.json is not a JSON object").expected("an object", kind_of(json));
  GraphPlan plan;
  const Json& nodes = expect_array(member(json, "nodes", "graph"), "nodes");
  for (size_t i = 0; i < nodes.size(); ++i) plan.nodes.push_back(to_node(nodes[i], cat("nodes[", i, "]")));
  plan.arg_nodes = to_ints(member(json, "arg_nodes", "graph"), "arg_nodes");
  plan.heads = to_entries(member(json, "heads", "graph"), "heads");
  plan.node_row_ptr = to_ints(member(json, "node_row_ptr", "graph"), "node_row_ptr");
  parse_entry_attrs(member(json, "attrs", "graph"), plan);
  if (json.contains("kiln")) parse_kiln_section(json["kiln"], plan, depth);
  return plan;
}

// --- validation -------------------------------------------------------------------------

void validate_row_ptr(const GraphPlan& plan) {
  const auto& rows = plan.node_row_ptr;
  if (rows.size() != plan.nodes.size() + 1)
    throw field_error("node_row_ptr", "needs one value per node plus one")
        .expected(cat(plan.nodes.size() + 1, " values"), cat(rows.size()));
  if (rows[0] != 0) throw field_error("node_row_ptr[0]", "must be 0").expected("0", cat(rows[0]));
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    if (rows[i + 1] < rows[i])
      throw field_error(cat("node_row_ptr[", i + 1, "]"), "decreases").expected(cat(">= ", rows[i]), cat(rows[i + 1]));
}

void validate_entry(const GraphPlan& plan, const GraphEntry& entry, int64_t node_limit, const std::string& field) {
  if (entry.node < 0 || entry.node >= node_limit)
    throw field_error(field, node_limit == static_cast<int64_t>(plan.nodes.size())
                                 ? cat("node ", entry.node, " out of range")
                                 : cat("node ", entry.node, " is not before node ", node_limit))
        .expected(cat("0 <= node < ", node_limit), cat(entry.node));
  const int64_t outputs = plan.num_node_outputs(entry.node);
  if (entry.index < 0 || entry.index >= outputs)
    throw field_error(field,
                      cat("output index ", entry.index, " out of range for node '", plan.nodes[entry.node].name, "'"))
        .expected(cat("0 <= index < ", outputs), cat(entry.index));
}

int64_t int_attr(const GraphNode& node, const std::string& key, const std::string& field) {
  const std::string& text = node.attrs.at(key);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    throw field_error(field + ".attrs." + key, "not an integer").expected("an integer", "\"" + text + "\"");
  return value;
}

void validate_node(const GraphPlan& plan, size_t i) {
  const GraphNode& node = plan.nodes[i];
  const std::string field = cat("nodes[", i, "]");
  if (node.name.empty()) throw field_error(field + ".name", "is empty");
  const int64_t outputs = plan.num_node_outputs(static_cast<int64_t>(i));
  if (node.is_variable()) {
    if (!node.inputs.empty()) throw field_error(field + ".inputs", "a \"null\" node takes no inputs");
    if (outputs != 1)
      throw field_error(field, "a \"null\" node has one output (node_row_ptr)").expected("1", cat(outputs));
    return;
  }
  if (node.is_if()) {
    if (node.inputs.empty()) throw field_error(field + ".inputs", "an If node reads its condition first");
  } else if (node.is_loop()) {
    if (node.inputs.size() < 2)
      throw field_error(field + ".inputs", "a Loop node reads its trip count and condition first")
          .expected("at least 2 inputs", cat(node.inputs.size()));
  } else if (node.op != "tvm_op") {
    throw field_error(field + ".op", "unknown node kind")
        .expected("\"null\", \"tvm_op\", \"kiln_if\" or \"kiln_loop\"", "\"" + node.op + "\"");
  } else if (node.func_name().empty()) {
    throw field_error(field + ".attrs.func_name", "missing or empty");
  }
  if (node.attrs.count("num_inputs")) {
    const int64_t declared = int_attr(node, "num_inputs", field);
    if (declared != static_cast<int64_t>(node.inputs.size()))
      throw field_error(field + ".attrs.num_inputs", "disagrees with the inputs list")
          .expected(cat(node.inputs.size()), cat(declared));
  }
  if (node.attrs.count("num_outputs")) {
    const int64_t declared = int_attr(node, "num_outputs", field);
    if (declared != outputs)
      throw field_error(field + ".attrs.num_outputs", "disagrees with node_row_ptr")
          .expected(cat(outputs), cat(declared));
  }
  if (node.attrs.count("flops") && int_attr(node, "flops", field) < 0)
    throw field_error(field + ".attrs.flops", "is negative").expected("a count >= 0", node.attrs.at("flops"));
  for (size_t j = 0; j < node.inputs.size(); ++j)
    validate_entry(plan, node.inputs[j], static_cast<int64_t>(i), cat(field, ".inputs[", j, "]"));
}

void validate_entry_attrs(const GraphPlan& plan) {
  const size_t n = plan.num_entries();
  auto check_length = [&](size_t size, const char* field) {
    if (size != n) throw field_error(field, "needs one value per entry").expected(cat(n, " values"), cat(size));
  };
  check_length(plan.dltype.size(), "attrs.dltype");
  check_length(plan.shape.size(), "attrs.shape");
  check_length(plan.storage_id.size(), "attrs.storage_id");
  if (!plan.device_index.empty()) check_length(plan.device_index.size(), "attrs.device_index");
  for (size_t e = 0; e < plan.device_index.size(); ++e)
    if (plan.device_index[e] < 1)
      throw field_error(cat("attrs.device_index[1][", e, "]"), "not a device")
          .expected("a DLDeviceType code >= 1 (1: cpu)", cat(plan.device_index[e]));
  for (size_t e = 0; e < n; ++e) {
    DType dtype;
    if (!try_parse_dtype(plan.dltype[e], &dtype))
      throw field_error(cat("attrs.dltype[1][", e, "]"), "unknown dtype").expected("a dtype", plan.dltype[e]);
    const bool dynamic = plan.is_dynamic(e);
    for (int64_t d : plan.shape[e])
      if (d < -1)
        throw field_error(cat("attrs.shape[1][", e, "]"), "negative dimension")
            .expected("dimensions >= 0, or -1 for one known only at run time", shape_str(plan.shape[e]));
    int64_t bytes = static_cast<int64_t>(dtype_bytes(dtype));
    for (int64_t d : plan.shape[e])
      if (d > 0 && (__builtin_mul_overflow(bytes, d, &bytes) || bytes > (int64_t{1} << 48)))
        throw field_error(cat("attrs.shape[1][", e, "]"), "tensor too large")
            .expected("at most 2^48 bytes", shape_str(plan.shape[e]));
    if (dynamic ? plan.storage_id[e] != -1 : plan.storage_id[e] < 0)
      throw field_error(cat("attrs.storage_id[1][", e, "]"),
                        dynamic ? "storage for a tensor of run-time shape" : "negative storage id")
          .expected(dynamic ? "-1 (allocated at run time)" : ">= 0", cat(plan.storage_id[e]));
    // Storage ids number blocks densely, so there are never more than entries; a larger id
    // would make the executor size its tables by it.
    if (plan.storage_id[e] >= static_cast<int64_t>(n))
      throw field_error(cat("attrs.storage_id[1][", e, "]"), "storage id out of range")
          .expected(cat("< ", n, " (the number of entries)"), cat(plan.storage_id[e]));
  }
}

void validate_names(const GraphPlan& plan) {
  std::map<std::string, size_t> variables;
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    if (plan.nodes[i].is_variable() && !variables.emplace(plan.nodes[i].name, i).second)
      throw field_error(cat("nodes[", i, "].name"), cat("input name '", plan.nodes[i].name, "' used twice"));
  std::set<std::string> seen;
  for (size_t i = 0; i < plan.input_names.size(); ++i) {
    const std::string& name = plan.input_names[i];
    const std::string field = cat("kiln.input_names[", i, "]");
    if (!variables.count(name)) throw field_error(field, cat("'", name, "' is not a \"null\" node"));
    if (!seen.insert(name).second) throw field_error(field, cat("'", name, "' listed twice"));
  }
  if (!plan.output_names.empty() && plan.output_names.size() != plan.heads.size())
    throw field_error("kiln.output_names", "needs one name per head")
        .expected(cat(plan.heads.size()), cat(plan.output_names.size()));
}

// The sub-graph a "kiln_if" node names in attrs.<key>.
const GraphPlan& branch_graph(const GraphPlan& plan, const GraphNode& node, const std::string& key,
                              const std::string& field) {
  if (!node.attrs.count(key)) throw field_error(field + ".attrs", cat("missing \"", key, "\""));
  const int64_t index = int_attr(node, key, field);
  const auto count = static_cast<int64_t>(plan.subgraphs.size());
  if (index < 0 || index >= count)
    throw field_error(cat(field, ".attrs.", key), "no such sub-graph")
        .expected(cat("0 <= index < ", count, " (kiln.subgraphs)"), cat(index));
  return plan.subgraphs[static_cast<size_t>(index)];
}

std::string entry_type(const GraphPlan& plan, size_t entry) {
  return cat(plan.dltype[entry], " ", shape_str(plan.shape[entry]));
}

// A branch takes the node's inputs after the condition and gives its outputs, typed alike.
void validate_branch(const GraphPlan& plan, size_t i, const std::string& key) {
  const GraphNode& node = plan.nodes[i];
  const std::string field = cat("nodes[", i, "]");
  const GraphPlan& branch = branch_graph(plan, node, key, field);
  const std::string where = cat(field, " (", key, ")");
  if (branch.input_names.size() + 1 != node.inputs.size())
    throw field_error(where, "the sub-graph's inputs differ from the node's inputs after the condition")
        .expected(cat(node.inputs.size() - 1), cat(branch.input_names.size()));
  for (size_t k = 0; k < branch.input_names.size(); ++k) {
    const size_t outer = plan.entry_id(node.inputs[k + 1]);
    size_t variable = 0;
    while (!(branch.nodes[variable].is_variable() && branch.nodes[variable].name == branch.input_names[k])) ++variable;
    const size_t inner = branch.entry_id(static_cast<int64_t>(variable), 0);
    if (plan.is_dynamic(outer))
      throw field_error(cat(field, ".inputs[", k + 1, "]"), "a sub-graph input of run-time shape");
    if (entry_type(plan, outer) != entry_type(branch, inner))
      throw field_error(cat(where, ".inputs[", k + 1, "]"), "the sub-graph's input has another type")
          .expected(entry_type(plan, outer), entry_type(branch, inner));
  }
  const auto outputs = static_cast<size_t>(plan.num_node_outputs(static_cast<int64_t>(i)));
  if (branch.heads.size() != outputs)
    throw field_error(where, "the sub-graph's heads differ from the node's outputs")
        .expected(cat(outputs), cat(branch.heads.size()));
  for (size_t k = 0; k < outputs; ++k) {
    const size_t outer = plan.entry_id(static_cast<int64_t>(i), static_cast<int64_t>(k));
    const size_t inner = branch.entry_id(branch.heads[k]);
    if (entry_type(plan, outer) != entry_type(branch, inner))
      throw field_error(cat(where, " output ", k), "the sub-graph's head has another type")
          .expected(entry_type(plan, outer), entry_type(branch, inner));
  }
}

void validate_if_nodes(const GraphPlan& plan) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (!plan.nodes[i].is_if()) continue;
    const size_t cond = plan.entry_id(plan.nodes[i].inputs[0]);
    if (plan.dltype[cond] != "bool" || plan.is_dynamic(cond) || num_elements(plan.shape[cond]) != 1)
      throw field_error(cat("nodes[", i, "].inputs[0]"), "an If's condition is one bool")
          .expected("bool ()", entry_type(plan, cond));
    validate_branch(plan, i, "then_graph");
    validate_branch(plan, i, "else_graph");
  }
}

bool is_scalar_entry(const GraphPlan& plan, size_t entry, std::string_view dtype) {
  return plan.dltype[entry] == dtype && !plan.is_dynamic(entry) && num_elements(plan.shape[entry]) == 1;
}

// Whether entry `outer` of `plan` has the dtype and rank of `inner` of `graph` and its extents
// where they are known.
bool entry_fits(const GraphPlan& plan, size_t outer, const GraphPlan& graph, size_t inner) {
  const Shape &from = plan.shape[outer], &to = graph.shape[inner];
  if (plan.dltype[outer] != graph.dltype[inner] || from.size() != to.size()) return false;
  for (size_t d = 0; d < to.size(); ++d)
    if (to[d] >= 0 && from[d] != to[d]) return false;
  return true;
}

size_t input_entry(const GraphPlan& graph, size_t k) {
  size_t variable = 0;
  while (!(graph.nodes[variable].is_variable() && graph.nodes[variable].name == graph.input_names[k])) ++variable;
  return graph.entry_id(static_cast<int64_t>(variable), 0);
}

// A loop body takes (iteration, condition, carried..., captured...) where the node takes
// (trip count, condition, initial carried..., captured...), and gives (condition, carried...,
// scan slices...) where the node gives (carried..., stacked scans...).
void validate_loop_node(const GraphPlan& plan, size_t i) {
  const GraphNode& node = plan.nodes[i];
  const std::string field = cat("nodes[", i, "]");
  const size_t trip = plan.entry_id(node.inputs[0]), cond = plan.entry_id(node.inputs[1]);
  if (!is_scalar_entry(plan, trip, "int64"))
    throw field_error(field + ".inputs[0]", "a Loop's trip count is one int64")
        .expected("int64 ()", entry_type(plan, trip));
  if (!is_scalar_entry(plan, cond, "bool"))
    throw field_error(field + ".inputs[1]", "a Loop's condition is one bool")
        .expected("bool ()", entry_type(plan, cond));
  if (!node.attrs.count("num_carried")) throw field_error(field + ".attrs", "missing \"num_carried\"");
  const int64_t num_carried = int_attr(node, "num_carried", field);
  const auto outputs = static_cast<size_t>(plan.num_node_outputs(static_cast<int64_t>(i)));
  if (num_carried < 0 || static_cast<size_t>(num_carried) + 2 > node.inputs.size() ||
      static_cast<size_t>(num_carried) > outputs)
    throw field_error(field + ".attrs.num_carried", "more carried values than the node's inputs or outputs allow")
        .expected(cat("0 <= n <= ", std::min(node.inputs.size() - 2, outputs)), cat(num_carried));
  const auto n = static_cast<size_t>(num_carried);
  const GraphPlan& body = branch_graph(plan, node, "body_graph", field);
  const std::string where = field + " (body_graph)";
  if (body.input_names.size() != node.inputs.size())
    throw field_error(where, "the body's inputs differ from the node's inputs")
        .expected(cat(node.inputs.size()), cat(body.input_names.size()));
  if (body.heads.size() != outputs + 1)
    throw field_error(where, "the body's heads differ from the node's outputs and the condition")
        .expected(cat(outputs + 1), cat(body.heads.size()));
  if (!is_scalar_entry(body, input_entry(body, 0), "int64") || !is_scalar_entry(body, input_entry(body, 1), "bool") ||
      !is_scalar_entry(body, body.entry_id(body.heads[0]), "bool"))
    throw field_error(where, "the body's iteration number is one int64 and its conditions one bool each");
  for (size_t k = 2; k < node.inputs.size(); ++k) {
    const size_t outer = plan.entry_id(node.inputs[k]), inner = input_entry(body, k);
    // A carried value whose extents change across iterations is '?' in the body.
    const bool carried_of_run_time_shape = k < 2 + n && body.is_dynamic(inner);
    if (plan.is_dynamic(outer) && !carried_of_run_time_shape)
      throw field_error(cat(field, ".inputs[", k, "]"), "a sub-graph input of run-time shape");
    if (carried_of_run_time_shape ? !entry_fits(plan, outer, body, inner)
                                  : entry_type(plan, outer) != entry_type(body, inner))
      throw field_error(cat(where, ".inputs[", k, "]"), "the body's input has another type")
          .expected(entry_type(plan, outer), entry_type(body, inner));
  }
  for (size_t k = 0; k < outputs; ++k) {
    const size_t outer = plan.entry_id(static_cast<int64_t>(i), static_cast<int64_t>(k));
    const size_t head = body.entry_id(body.heads[k + 1]);
    std::string expected = entry_type(body, head);
    if (k < n) {
      const size_t input = input_entry(body, k + 2);
      if (entry_type(body, input) != expected)
        throw field_error(cat(where, " head ", k + 1), "a carried value changes type across iterations")
            .expected(entry_type(body, input), expected);
    } else {
      Shape stacked = body.shape[head];
      stacked.insert(stacked.begin(), plan.shape[outer].empty() ? 0 : plan.shape[outer][0]);
      expected = cat(body.dltype[head], " ", shape_str(stacked));
    }
    if (entry_type(plan, outer) != expected)
      throw field_error(cat(field, " output ", k), k < n ? "a carried output differs from the body's head"
                                                         : "a scan output is not the body's head stacked")
          .expected(expected, entry_type(plan, outer));
  }
}

void validate_control_nodes(const GraphPlan& plan) {
  validate_if_nodes(plan);
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    if (plan.nodes[i].is_loop()) validate_loop_node(plan, i);
}

}  // namespace

std::string GraphNode::func_name() const {
  const auto it = attrs.find("func_name");
  return it == attrs.end() ? std::string() : it->second;
}

void validate_graph(const GraphPlan& plan) {
  for (size_t i = 0; i < plan.subgraphs.size(); ++i) {
    try {
      validate_graph(plan.subgraphs[i]);
    } catch (Error& e) {
      throw e.node(cat("kiln.subgraphs[", i, "]"));
    }
  }
  validate_row_ptr(plan);
  for (size_t i = 0; i < plan.nodes.size(); ++i) validate_node(plan, i);
  const auto num_nodes = static_cast<int64_t>(plan.nodes.size());
  for (size_t i = 0; i < plan.arg_nodes.size(); ++i) {
    const int64_t node = plan.arg_nodes[i];
    const std::string field = cat("arg_nodes[", i, "]");
    if (node < 0 || node >= num_nodes)
      throw field_error(field, cat("node ", node, " out of range")).expected(cat("0 <= node < ", num_nodes), cat(node));
    if (!plan.nodes[node].is_variable()) throw field_error(field, cat("node ", node, " is not a \"null\" node"));
  }
  if (plan.heads.empty()) throw field_error("heads", "the graph has no outputs");
  for (size_t i = 0; i < plan.heads.size(); ++i) validate_entry(plan, plan.heads[i], num_nodes, cat("heads[", i, "]"));
  validate_entry_attrs(plan);
  validate_names(plan);
  validate_control_nodes(plan);
  if (plan.abi_version != KILN_ABI_VERSION)
    throw field_error("kiln.abi_version", "artifact built for another kernel ABI")
        .expected(cat(KILN_ABI_VERSION), cat(plan.abi_version));
}

GraphPlan parse_graph_json(std::string_view text, const std::string& what) {
  try {
    Json json;
    try {
      json = Json::parse(text);
    } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number too large
      throw Error(cat("graph is not valid JSON: ", e.what()));
    }
    GraphPlan plan = plan_from_json(json, 0);
    validate_graph(plan);
    return plan;
  } catch (Error& e) {
    e.file(what);
    throw;
  }
}

GraphPlan read_graph_json(const std::string& path) { return parse_graph_json(InputFile(path).read_all(), path); }

namespace {

Json entry_to_json(const GraphEntry& entry) { return Json::array({entry.node, entry.index, entry.version}); }

Json entries_to_json(const std::vector<GraphEntry>& entries) {
  Json list = Json::array();
  for (const GraphEntry& entry : entries) list.push_back(entry_to_json(entry));
  return list;
}

Json node_to_json(const GraphNode& node) {
  Json json = {{"op", node.op}, {"name", node.name}};
  if (!node.attrs.empty()) {
    Json attrs = Json::object();
    for (const auto& [key, value] : node.attrs) attrs[key] = value;
    json["attrs"] = std::move(attrs);
  }
  json["inputs"] = entries_to_json(node.inputs);
  return json;
}

Json plan_to_json(const GraphPlan& plan) {
  Json json = Json::object();
  Json nodes = Json::array();
  for (const GraphNode& node : plan.nodes) nodes.push_back(node_to_json(node));
  json["nodes"] = std::move(nodes);
  json["arg_nodes"] = plan.arg_nodes;
  json["heads"] = entries_to_json(plan.heads);
  json["node_row_ptr"] = plan.node_row_ptr;
  Json attrs = Json::object();
  attrs["dltype"] = Json::array({"list_str", plan.dltype});
  attrs["shape"] = Json::array({"list_shape", plan.shape});
  attrs["storage_id"] = Json::array({"list_int", plan.storage_id});
  if (!plan.device_index.empty()) attrs["device_index"] = Json::array({"list_int", plan.device_index});
  json["attrs"] = std::move(attrs);
  json["kiln"] = {
      {"input_names", plan.input_names}, {"output_names", plan.output_names}, {"abi_version", plan.abi_version}};
  if (!plan.subgraphs.empty()) {
    Json subgraphs = Json::array();
    for (const GraphPlan& subgraph : plan.subgraphs) subgraphs.push_back(plan_to_json(subgraph));
    json["kiln"]["subgraphs"] = std::move(subgraphs);
  }
  return json;
}

}  // namespace

std::string graph_to_json(const GraphPlan& plan) {
  validate_graph(plan);
  return plan_to_json(plan).dump(1) + "\n";
}

void write_graph_json(const std::string& path, const GraphPlan& plan) {
  const std::string text = graph_to_json(plan);
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

}  // namespace kiln
