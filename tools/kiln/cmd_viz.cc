// kiln viz MODEL [-O N] [--profile FILE] -o graph.html: one self-contained page (inline script
// and style, no network) drawing @main before and after fusion. Each node shows its op, source
// name and type; each fused function is a box named after its kernel, with its share of run
// time when --profile gives `kiln bench --profile` output. The page is viz_page.h.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "cli.h"
#include "compiled_model.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "viz_page.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct KernelTime {
  double share = 0;  // percent of a run
  int calls = 0;
};

// One row of `kiln bench --profile` ("ms/run share% calls GFLOP/s peak% function", the flop
// columns "-" when not counted), or nothing for other lines (the peak line, the header, blank
// lines). Parsed by hand: GCC 12 warns inside <regex> under ASan.
std::optional<std::pair<std::string, KernelTime>> profile_row(const std::string& line) {
  std::istringstream fields(line);
  double ms = 0, share = 0;
  char percent = 0;
  int calls = 0;
  std::string gflops, peak, function, extra;
  if (!(fields >> ms >> share >> percent >> calls >> gflops >> peak >> function) || percent != '%' ||
      (fields >> extra))
    return std::nullopt;
  return std::pair{function, KernelTime{share, calls}};
}

// The rows of `kiln bench --profile`, by function.
std::map<std::string, KernelTime> read_profile(const std::string& path) {
  fs::path file = fs::is_directory(path) ? fs::path(path) / "profile.txt" : fs::path(path);
  std::ifstream in(file);
  if (!in) throw Error("cannot read the profile").file(file.string());
  std::map<std::string, KernelTime> times;
  std::string line;
  while (std::getline(in, line))
    if (auto row = profile_row(line)) times[row->first] = row->second;
  if (times.empty())
    throw std::move(
        Error("no profile rows found").file(file.string()).expected("`kiln bench --profile` output", "none"));
  return times;
}

// Nodes and fused groups of one function, in the page's format. Parameters that are not
// inputs (weights) and constants are not drawn; each node counts them instead.
class GraphWriter {
 public:
  GraphWriter(const std::vector<std::string>& input_names, std::vector<std::string> kernel_names,
              const std::map<std::string, KernelTime>& profile)
      : inputs_(input_names.begin(), input_names.end()), kernel_names_(std::move(kernel_names)), profile_(profile) {}

  json write(const std::string& title, const FunctionNode& main) {
    Producers values;
    for (const Var& p : main.params)
      if (inputs_.count(p->name)) values[p.get()] = {add_node("input", p->name, p->name, p, -1, 0)};
    walk(main.body, values, -1);
    return json{{"title", title}, {"nodes", nodes_}, {"groups", groups_}};
  }

 private:
  using Producers = std::unordered_map<const ExprNode*, std::vector<int>>;

  void walk(const Expr& body, Producers& values, int group) {
    post_order_visit(
        body, [&](const Expr& e) { visit(e, values, group); }, /*enter_functions=*/false);
  }

  void visit(const Expr& e, Producers& values, int group) {
    if (values.count(e.get())) return;
    std::vector<int>& out = values[e.get()];
    if (const auto* call = as<CallNode>(e)) {
      std::vector<int> from;
      int weights = 0;
      for (const Expr& a : call->args) {
        const std::vector<int>& p = values[a.get()];
        from.insert(from.end(), p.begin(), p.end());
        if (p.empty()) ++weights;
      }
      if (call->op()) {
        // An op called by @main itself has a graph node of its own (a reference kernel).
        if (group < 0) ++next_kernel_;
        out = {add_node("op", call->op()->name, e->source, e, group, weights, from)};
      } else if (Function fn = as_function(call->callee); fn && group < 0) {
        out = fused_call(*fn, *call, values);
      } else {
        out = {add_node("op", "call", e->source, e, group, weights, from)};
      }
    } else if (const auto* tuple = as<TupleNode>(e)) {
      for (const Expr& f : tuple->fields) out.insert(out.end(), values[f.get()].begin(), values[f.get()].end());
    } else if (const auto* item = as<TupleGetItemNode>(e)) {
      out = values[item->tuple.get()];
    }
  }

  // A call of a fused function: a group holding the nodes of its body.
  std::vector<int> fused_call(const FunctionNode& fn, const CallNode& call, Producers& values) {
    int group = static_cast<int>(groups_.size());
    json g{{"name", next_kernel_name(fn)}};
    if (auto t = profile_.find(g["name"]); t != profile_.end()) {
      g["share"] = t->second.share;
      g["calls"] = t->second.calls;
    }
    groups_.push_back(g);
    Producers inner;
    for (size_t i = 0; i < fn.params.size() && i < call.args.size(); ++i)
      inner[fn.params[i].get()] = values[call.args[i].get()];
    walk(fn.body, inner, group);
    return inner[fn.body.get()];
  }

  // The build's graph names each fused call's kernel in this same order (see cmd_viz's use).
  std::string next_kernel_name(const FunctionNode& fn) {
    if (next_kernel_ >= kernel_names_.size()) return "fused";
    std::string name = kernel_names_[next_kernel_];
    if (name.rfind("kiln_ref.", 0) != 0) {
      ++next_kernel_;
      return name;
    }
    // Run by reference kernels: one graph node per op call of the body.
    post_order_visit(
        fn.body,
        [&](const Expr& e) {
          const auto* c = as<CallNode>(e);
          if (c && c->op()) ++next_kernel_;
        },
        /*enter_functions=*/false);
    return "reference kernels";
  }

  int add_node(const char* kind, const std::string& op, const std::string& name, const Expr& e, int group, int weights,
               const std::vector<int>& from = {}) {
    std::string type = e->checked_type() ? type_str(e->checked_type()) : "";
    nodes_.push_back(json{{"kind", kind},
                          {"op", op},
                          {"name", name},
                          {"type", type},
                          {"group", group},
                          {"weights", weights},
                          {"from", from}});
    return static_cast<int>(nodes_.size()) - 1;
  }

  std::set<std::string> inputs_;
  std::vector<std::string> kernel_names_;
  size_t next_kernel_ = 0;
  const std::map<std::string, KernelTime>& profile_;
  json nodes_ = json::array(), groups_ = json::array();
};

// func_name of each kernel node of the build's graph plan, in order: the plan lists the fused
// calls of @main in the post order GraphWriter walks them.
std::vector<std::string> kernel_names(const std::string& graph_json) {
  std::vector<std::string> names;
  const json graph = json::parse(graph_json);
  for (const json& node : graph.at("nodes"))
    if (node.value("op", "") == "tvm_op") names.push_back(node.at("attrs").value("func_name", ""));
  return names;
}

// The data goes into a <script> element: "</" must not end it early.
std::string script_safe(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

}  // namespace

int cmd_viz(const Args& args) {
  check(args.positionals().size() == 1, "viz takes one model file");
  check(args.has("-o"), "viz needs the output file: -o graph.html");
  LoadedModel model = load_model(args.positionals()[0], args);
  std::map<std::string, KernelTime> profile;
  if (args.has("--profile")) profile = read_profile(args.get("--profile"));
  json data;
  try {
    IRModule typed = infer_types(model.module);
    PassContext ctx = pass_context(args);
    IRModule fused = optimize(typed, ctx);
    BuildOptions options;
    options.passes = ctx;
    BuiltModel built = build(typed, {}, model.input_names, model.output_names, options);
    const Function& before = typed.lookup("main");
    const Function& after = fused.lookup("main");
    data["model"] = fs::path(model.path).filename().string();
    data["profile"] = !profile.empty();
    data["views"] = json::array({GraphWriter(model.input_names, {}, {}).write("before fusion", *before),
                                 GraphWriter(model.input_names, kernel_names(built.graph_json), profile)
                                     .write(cat("after fusion (-O", ctx.opt_level, ")"), *after)});
  } catch (Error& e) {
    throw e.file(model.path);
  }
  std::string page = kVizPage;
  const std::string slot = "/*KILN_GRAPH_DATA*/null";
  size_t at = page.find(slot);
  check_invariant(at != std::string::npos, "viz page template has no data slot");
  page.replace(at, slot.size(), script_safe(data.dump()));
  write_file(args.get("-o"), page);
  std::cout << "wrote " << args.get("-o") << "\n";
  return 0;
}

}  // namespace kiln::cli
