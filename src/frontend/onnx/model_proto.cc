#include "frontend/onnx/model_proto.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>
#include <set>

#include "frontend/onnx/node_order.h"
#include "kiln/support/error.h"
#include "kiln/support/strings.h"

namespace kiln::frontend {

onnx::ModelProto parse_model_proto(std::string_view bytes) {
  check(!bytes.empty(), "not an ONNX model: the file is empty");
  check(bytes.size() < static_cast<size_t>(INT_MAX), "the model is larger than 2 GiB; protobuf cannot read it, so its ",
        "weights must be stored as external data");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(cat("not a valid ONNX model: the ", bytes.size(),
                    " bytes do not parse as an onnx.ModelProto (the file is truncated, corrupt or not ONNX)"));
  // Protobuf accepts many byte strings that are not models (unknown fields are kept), so
  // also ask for what every model has.
  if (!model.has_graph() || model.ir_version() <= 0)
    throw Error(
        cat("not an ONNX model: the file parses as protobuf but has no ", model.has_graph() ? "ir_version" : "graph"));
  return model;
}

namespace {

constexpr const char* kUncheckedPrefix = "kiln.unchecked.";

bool is_external(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

// The checker looks for external data files relative to the working directory; kiln reads
// them itself (relative to the model, with its own errors), so the checker gets a copy in
// which external initializers are empty tensors.
onnx::ModelProto without_external_data(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  for (auto& t : *copy.mutable_graph()->mutable_initializer()) {
    if (!is_external(t)) continue;
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.clear_dims();
    t.add_dims(0);
    t.set_raw_data("");
  }
  return copy;
}

void check_model_on_one_line(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    // The checker's text spans lines ("...\n\n==> Context: Bad node spec ..."); keep it on one.
    std::string one_line;
    for (char c : std::string(e.what())) {
      if (c != '\n')
        one_line += c;
      else if (!one_line.empty() && one_line.back() != ' ')
        one_line += ' ';
    }
    throw Error(cat("the ONNX checker rejects the model: ", one_line, " (import with --no-check to skip the checker)"));
  }
}

std::string canonical(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

// The imported domains whose opset is newer than the linked checker's last one.
std::string unchecked_domain(const std::string& domain) {
  return kUncheckedPrefix + (canonical(domain).empty() ? std::string("ai.onnx") : domain);
}

std::set<std::string> domains_newer_than_checker(const onnx::ModelProto& model) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::set<std::string> out;
  for (const auto& entry : model.opset_import()) {
    auto it = known.find(canonical(entry.domain()));
    if (it != known.end() && entry.version() > it->second.second) out.insert(canonical(entry.domain()));
  }
  return out;
}

void move_nodes_to_unchecked(onnx::GraphProto& graph, const std::set<std::string>& domains);

void move_node_to_unchecked(onnx::NodeProto& node, const std::set<std::string>& domains) {
  if (domains.count(canonical(node.domain()))) node.set_domain(unchecked_domain(node.domain()));
  for (auto& attr : *node.mutable_attribute()) {
    if (attr.has_g()) move_nodes_to_unchecked(*attr.mutable_g(), domains);
    for (auto& g : *attr.mutable_graphs()) move_nodes_to_unchecked(g, domains);
  }
}

void move_nodes_to_unchecked(onnx::GraphProto& graph, const std::set<std::string>& domains) {
  for (auto& node : *graph.mutable_node()) move_node_to_unchecked(node, domains);
}

// The checker judges an operator by the newest schema it knows, which for a newer opset
// may be the wrong version (ReduceMean-18 takes axes as an input, Split-18 has
// num_outputs) or none at all (Mish). It skips schemas only for domains it does not know,
// so the copy it gets moves the nodes of newer domains to a private one: the graph's
// structure, names, order, tensors and subgraphs are still checked, and kiln's converters
// check those operators' inputs and attributes. A newer IR version is capped likewise
// (what it adds, float8 and 4-bit types, kiln does not convert).
void make_checkable(onnx::ModelProto& model, const std::set<std::string>& newer) {
  if (model.ir_version() > onnx::IR_VERSION) model.set_ir_version(onnx::IR_VERSION);
  if (newer.empty()) return;
  for (auto& entry : *model.mutable_opset_import())
    if (newer.count(canonical(entry.domain()))) entry.set_domain(unchecked_domain(entry.domain()));
  move_nodes_to_unchecked(*model.mutable_graph(), newer);
}

}  // namespace

void run_onnx_checker(const onnx::ModelProto& model) {
  const auto& inits = model.graph().initializer();
  bool external = std::any_of(inits.begin(), inits.end(), is_external);
  bool sorted = nodes_sorted(model.graph());
  const std::set<std::string> newer_domains = domains_newer_than_checker(model);
  bool newer = model.ir_version() > onnx::IR_VERSION || !newer_domains.empty();
  if (!external && sorted && !newer) return check_model_on_one_line(model);
  // The checker insists on ONNX's node order, which kiln does not need (the importer
  // orders nodes itself); it checks a sorted copy, so everything else is still checked.
  onnx::ModelProto copy = external ? without_external_data(model) : model;
  if (!sorted) sort_nodes(*copy.mutable_graph());
  if (newer) make_checkable(copy, newer_domains);
  check_model_on_one_line(copy);
}

std::string node_label(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return node.name();
  std::string out = cat("#", index, " (", node.op_type());
  if (node.output_size() > 0) out += cat(" -> ", node.output(0));
  return out + ")";
}

}  // namespace kiln::frontend
