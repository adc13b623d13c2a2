#include "runtime/graph_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "runtime/attrs_json.h"
#include "runtime_test_util.h"

namespace kiln {
namespace {

// The example of the artifact contract, as TVM writes it.
const char* kContractExample = R"({"nodes":[{"op":"null","name":"x","inputs":[]},
  {"op":"tvm_op","name":"fused_add_exp","attrs":{"func_name":"fused_add_exp","num_inputs":"1","num_outputs":"1","flatten_data":"0"},"inputs":[[0,0,0]]}],
  "arg_nodes":[0], "heads":[[1,0,0]], "node_row_ptr":[0,1,2],
  "attrs":{"dltype":["list_str",["float32","float32"]], "shape":["list_shape",[[1,10],[1,10]]],
           "storage_id":["list_int",[0,1]], "device_index":["list_int",[1,1]]}})";

TEST(GraphJson, ParsesTheContractExample) {
  const GraphPlan plan = parse_graph_json(kContractExample, "graph.json");
  ASSERT_EQ(plan.nodes.size(), 2u);
  EXPECT_TRUE(plan.nodes[0].is_variable());
  EXPECT_EQ(plan.nodes[0].name, "x");
  EXPECT_EQ(plan.nodes[1].func_name(), "fused_add_exp");
  EXPECT_EQ(plan.nodes[1].attrs.at("num_inputs"), "1");
  EXPECT_EQ(plan.nodes[1].inputs, (std::vector<GraphEntry>{{0, 0, 0}}));
  EXPECT_EQ(plan.arg_nodes, (std::vector<int64_t>{0}));
  EXPECT_EQ(plan.heads, (std::vector<GraphEntry>{{1, 0, 0}}));
  EXPECT_EQ(plan.num_entries(), 2u);
  EXPECT_EQ(plan.dltype, (std::vector<std::string>{"float32", "float32"}));
  EXPECT_EQ(plan.shape, (std::vector<Shape>{{1, 10}, {1, 10}}));
  EXPECT_EQ(plan.storage_id, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(plan.device_index, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(plan.input_names.empty());
  EXPECT_EQ(plan.abi_version, 1);
}

GraphPlan two_output_plan() {
  GraphPlan plan;
  plan.nodes = {{"null", "x", {}, {}},
                {"null", "w", {}, {}},
                {"tvm_op",
                 "split_node",
                 {{"func_name", "kiln_ref.split"},
                  {"num_inputs", "2"},
                  {"num_outputs", "2"},
                  {"flatten_data", "0"},
                  {"op_attrs", R"({"indices_or_sections":2,"axis":1})"}},
                 {{0, 0, 0}, {1, 0, 0}}}};
  plan.arg_nodes = {0, 1};
  plan.heads = {{2, 1, 0}, {2, 0, 0}};
  plan.node_row_ptr = {0, 1, 2, 4};
  plan.dltype = {"float32", "int64", "float32", "float32"};
  plan.shape = {{2, 4}, {}, {2, 2}, {2, 2}};
  plan.storage_id = {0, 1, 2, 3};
  plan.device_index = {1, 1, 1, 1};
  plan.input_names = {"x"};
  plan.output_names = {"second", "first"};
  return plan;
}

TEST(GraphJson, WriterAndParserRoundTrip) {
  const GraphPlan plan = two_output_plan();
  const std::string text = graph_to_json(plan);
  EXPECT_NE(text.find("\"list_shape\""), std::string::npos);
  EXPECT_NE(text.find("\"kiln\""), std::string::npos);
  const GraphPlan back = parse_graph_json(text, "graph.json");
  EXPECT_EQ(back, plan);
  EXPECT_EQ(graph_to_json(back), text);
}

TEST(GraphJson, WriterKeepsTvmKeyOrder) {
  const std::string text = graph_to_json(two_output_plan());
  const size_t nodes = text.find("\"nodes\""), arg_nodes = text.find("\"arg_nodes\""), heads = text.find("\"heads\""),
               row_ptr = text.find("\"node_row_ptr\""), attrs = text.find("\"attrs\": {\n  \"dltype\"");
  EXPECT_LT(nodes, arg_nodes);
  EXPECT_LT(arg_nodes, heads);
  EXPECT_LT(heads, row_ptr);
  EXPECT_NE(attrs, std::string::npos) << text;
}

// Replaces the first occurrence of `from` in the contract example and returns the parse error.
std::string error_after_edit(const std::string& from, const std::string& to) {
  std::string text = kContractExample;
  const size_t at = text.find(from);
  if (at == std::string::npos) return "edit not applied: " + from;
  text.replace(at, from.size(), to);
  return error_of([&] { parse_graph_json(text, "m.kiln/graph.json"); });
}

void expect_error(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find("m.kiln/graph.json: "), std::string::npos) << message;
  EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
}

TEST(GraphJson, ValidationErrorsNameTheField) {
  expect_error(error_after_edit("[[0,0,0]]}]", "[[5,0,0]]}]"), "nodes[1].inputs[0]: node 5 is not before node 1");
  expect_error(error_after_edit("[[0,0,0]]}]", "[[1,0,0]]}]"), "nodes[1].inputs[0]: node 1 is not before node 1");
  expect_error(error_after_edit("[[0,0,0]]}]", "[[0,1,0]]}]"), "nodes[1].inputs[0]: output index 1 out of range");
  expect_error(error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[[2,0,0]]"), "heads[0]: node 2 out of range");
  expect_error(error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[]"), "heads: the graph has no outputs");
  expect_error(error_after_edit("[0,1,2]", "[0,1]"), "node_row_ptr: needs one value per node plus one");
  expect_error(error_after_edit("[0,1,2]", "[1,1,2]"), "node_row_ptr[0]: must be 0");
  expect_error(error_after_edit("\"float32\",\"float32\"", "\"float32\""),
               "attrs.dltype: needs one value per entry (expected 2 values, found 1)");
  expect_error(error_after_edit("[0,1,2]", "[0,2,3]"), "nodes[0]: a \"null\" node has one output");
  expect_error(error_after_edit("[0,1]]", "[0]]"), "attrs.storage_id: needs one value per entry");
  expect_error(error_after_edit("[0,1]]", "[0,-1]]"), "attrs.storage_id[1][1]: negative storage id");
  // A huge id made the executor size a table by it: out of memory (fuzz/regressions/artifact/).
  expect_error(error_after_edit("[0,1]]", "[0,1000000000000000]]"),
               "attrs.storage_id[1][1]: storage id out of range (expected < 2 (the number of entries)");
  expect_error(error_after_edit("[1,1]]}}", "[1]]}}"), "attrs.device_index: needs one value per entry");
  expect_error(error_after_edit("[[1,10],[1,10]]", "[[1,10]]"), "attrs.shape: needs one value per entry");
  expect_error(error_after_edit("[[1,10],[1,10]]", "[[1,10],[1,-2]]"), "attrs.shape[1][1]: negative dimension");
  expect_error(error_after_edit("[[1,10],[1,10]]", "[[1,10],[1,-1]]"),
               "attrs.storage_id[1][1]: storage for a tensor of run-time shape");
  expect_error(error_after_edit("\"float32\",\"float32\"", "\"float32\",\"float33\""),
               "attrs.dltype[1][1]: unknown dtype");
  expect_error(error_after_edit("\"list_int\",[0,1]", "\"list_str\",[0,1]"), "attrs.storage_id: malformed");
  expect_error(error_after_edit("\"num_inputs\":\"1\"", "\"num_inputs\":\"2\""),
               "nodes[1].attrs.num_inputs: disagrees with the inputs list");
  expect_error(error_after_edit("\"num_outputs\":\"1\"", "\"num_outputs\":\"x\""),
               "nodes[1].attrs.num_outputs: not an integer");
  expect_error(error_after_edit("\"func_name\":\"fused_add_exp\",", ""), "nodes[1].attrs.func_name: missing");
  expect_error(error_after_edit("\"op\":\"tvm_op\"", "\"op\":\"my_op\""), "nodes[1].op: unknown node kind");
  expect_error(error_after_edit("\"arg_nodes\":[0]", "\"arg_nodes\":[1]"), "arg_nodes[0]: node 1 is not a \"null\"");
  expect_error(error_after_edit("\"arg_nodes\":[0], ", ""), "graph: missing key \"arg_nodes\"");
  expect_error(error_after_edit("\"name\":\"x\"", "\"name\":3"), "nodes[0].name: wrong JSON type (expected a string");
  expect_error(error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[[1]]"), "heads[0]: an entry is [node, index");
  expect_error(error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[[1,0,0]], \"kiln\":{\"input_names\":[\"y\"]}"),
               "kiln.input_names[0]: 'y' is not a \"null\" node");
  expect_error(
      error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[[1,0,0]], \"kiln\":{\"output_names\":[\"a\",\"b\"]}"),
      "kiln.output_names: needs one name per head");
  expect_error(error_after_edit("\"heads\":[[1,0,0]]", "\"heads\":[[1,0,0]], \"kiln\":{\"abi_version\":2}"),
               "kiln.abi_version: artifact built for another kernel ABI");
}

// y = if (c) { exp(x) } else { x }: a "kiln_if" node whose branches are sub-graphs 0 and 1.
GraphPlan if_plan() {
  runtime_test::PlanBuilder then_graph, else_graph, main;
  then_graph.output(then_graph.call("e", "kiln_ref.exp", {then_graph.input("if.0", {3})}, {3}));
  else_graph.output(else_graph.input("if.0", {3}));
  const int64_t c = main.input("c", {}, "bool"), x = main.input("x", {3});
  main.output(main.if_node("if", c, {x}, 0, 1, {{{3}}}), "y");
  return main.plan({then_graph.plan(), else_graph.plan()});
}

TEST(GraphJson, IfNodesAndSubgraphsRoundTrip) {
  const GraphPlan plan = if_plan();
  const std::string text = graph_to_json(plan);
  EXPECT_NE(text.find("\"subgraphs\""), std::string::npos);
  const GraphPlan back = parse_graph_json(text, "graph.json");
  EXPECT_EQ(back, plan);
  EXPECT_TRUE(back.nodes[2].is_if());
  EXPECT_EQ(back.subgraphs[0].nodes[1].func_name(), "kiln_ref.exp");
}

TEST(GraphJson, IfNodesAreValidated) {
  auto error_with = [](const std::function<void(GraphPlan&)>& edit) {
    GraphPlan plan = if_plan();
    edit(plan);
    return error_of([&] { parse_graph_json(graph_to_json(plan), "m.kiln/graph.json"); }) +
           error_of([&] { validate_graph(plan); });
  };
  auto expect_part = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
  };
  expect_part(error_with([](GraphPlan& p) { p.nodes[2].attrs["else_graph"] = "2"; }),
              "nodes[2].attrs.else_graph: no such sub-graph (expected 0 <= index < 2 (kiln.subgraphs), found 2)");
  expect_part(error_with([](GraphPlan& p) { p.nodes[2].attrs.erase("then_graph"); }),
              "nodes[2].attrs: missing \"then_graph\"");
  expect_part(error_with([](GraphPlan& p) { p.dltype[0] = "int64"; }),
              "nodes[2].inputs[0]: an If's condition is one bool (expected bool (), found int64 ()");
  expect_part(error_with([](GraphPlan& p) { p.subgraphs[1].shape[0] = {4}; }),
              "nodes[2] (else_graph).inputs[1]: the sub-graph's input has another type (expected float32 (3), found "
              "float32 (4))");
  expect_part(error_with([](GraphPlan& p) {
                p.subgraphs[0].heads.push_back({0, 0, 0});
              }),
              "nodes[2] (then_graph): the sub-graph's heads differ from the node's outputs (expected 1, found 2)");
  expect_part(error_with([](GraphPlan& p) { p.subgraphs[0].input_names.clear(); }),
              "the sub-graph's inputs differ from the node's inputs after the condition");
  expect_part(error_with([](GraphPlan& p) {
                p.subgraphs[0].nodes[1].inputs = {{1, 0, 0}};
              }),
              "node 'kiln.subgraphs[0]': nodes[1].inputs[0]: node 1 is not before node 1");
  expect_part(error_with([](GraphPlan& p) { p.nodes[2].inputs.clear(); }),
              "nodes[2].inputs: an If node reads its condition first");
}

TEST(GraphJson, CorruptJsonIsAnError) {
  const std::string text = kContractExample;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{40}, text.size() / 2, text.size() - 1})
    expect_error(error_of([&] { parse_graph_json(text.substr(0, cut), "m.kiln/graph.json"); }),
                 "graph is not valid JSON");
  expect_error(error_of([] { parse_graph_json("[1, 2]", "m.kiln/graph.json"); }), "not a JSON object");
  // Found by fuzz_artifact (fuzz/regressions/artifact/json-number-overflow): nlohmann reports a
  // number too large for a double as out_of_range, not parse_error, and it escaped kiln::Error.
  expect_error(error_of([] { parse_graph_json("501111111111e1111", "m.kiln/graph.json"); }),
               "graph is not valid JSON: [json.exception.out_of_range.406] number overflow");
}

TEST(GraphJson, WriterValidates) {
  GraphPlan plan = two_output_plan();
  plan.storage_id.pop_back();
  EXPECT_NE(error_of([&] { graph_to_json(plan); }).find("attrs.storage_id"), std::string::npos);
}

TEST(AttrsJson, RoundTripsEveryKindOfValue) {
  Attrs attrs;
  attrs.set("axis", AttrValue(int64_t{-1}))
      .set("eps", AttrValue(1e-5))
      .set("whole", AttrValue(2.0))
      .set("layout", AttrValue("NCHW"))
      .set("flag", AttrValue(true))
      .set("none", AttrValue())
      .set("pads", AttrValue(std::vector<int64_t>{1, 2, 3, 4}))
      .set("nested", AttrValue(AttrValue::List{AttrValue(int64_t{1}), AttrValue("a"), AttrValue(AttrValue::List{})}))
      .set("low", AttrValue(-HUGE_VAL))
      .set("high", AttrValue(HUGE_VAL));
  const std::string text = attrs_to_json(attrs);
  EXPECT_EQ(text, R"({"axis":-1,"eps":1e-05,"whole":2.0,"layout":"NCHW","flag":true,"none":null,"pads":[1,2,3,4],)"
                  R"("nested":[1,"a",[]],"low":{"float":"-inf"},"high":{"float":"inf"}})");
  const Attrs back = attrs_from_json(text);
  EXPECT_EQ(back, attrs);
  EXPECT_TRUE(back.get("whole").is_float());
  const Attrs nan = attrs_from_json(attrs_to_json(Attrs{{"v", AttrValue(std::nan(""))}}));
  EXPECT_TRUE(std::isnan(nan.get_double("v")));
}

TEST(AttrsJson, RejectsWhatIsNotAnAttrsObject) {
  EXPECT_NE(error_of([] { attrs_from_json("{\"a\": "); }).find("op_attrs is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([] { attrs_from_json("{\"a\": 1e999}"); }).find("op_attrs is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([] { attrs_from_json("[1]"); }).find("op_attrs is not a JSON object"), std::string::npos);
  EXPECT_NE(error_of([] { attrs_from_json(R"({"a": {"b": 1}})"); }).find("attribute 'a'"), std::string::npos);
}

}  // namespace
}  // namespace kiln
