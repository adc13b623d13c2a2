// The IR texts of the seed notes (TVM's printed Relay, with the comment markers restored)
// must read back and print identically, and printing must be a fixed point.
#include <gtest/gtest.h>

#include <cctype>

#include "ir/seed_texts.h"
#include "ir/text_test_util.h"
#include "kiln/ir/op.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/structural.h"
#include "kiln/ir/type_infer.h"

namespace kiln {
namespace {

using testing::squash;

struct Seed {
  std::string name;
  std::string text;
  bool typed;                      // carries /* ty=... */ comments: run InferType before printing
  std::vector<std::string> needs;  // ops outside the planned built-in set
};

std::vector<Seed> seeds() {
  return {
      {"remove_unused_before",
       "def @fn1(%x: Tensor[(1, 1000), float32]) { %x }\n\n"
       "def @fn2(%y: Tensor[(1, 1000), float32]) { %y }\n\n"
       "def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }",
       false,
       {}},
      {"remove_unused_after",
       "def @fn1(%x: Tensor[(1, 1000), float32]) { %x }\n\n"
       "def @main(%z: Tensor[(1, 1000), float32]) { %0 = @fn1(%z); add(%z, %0) }",
       false,
       {}},
      {"simplify_inference_before",
       "def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32], %a: "
       "Tensor[(10), float32], %b: Tensor[(10), float32]) { %0 = nn.batch_norm(%x, %x1, %y, %a, %b); %1 = %0.0; "
       "%2 = nn.dropout(%1); %2.0 }",
       false,
       {}},
      {"simplify_inference_after",
       "def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32], %a: "
       "Tensor[(10), float32], %b: Tensor[(10), float32]) -> Tensor[(1, 10), float32] { %0 = add(%b, 1e-05f /* "
       "ty=float32 */) /* ty=Tensor[(10), float32] */; %1 = sqrt(%0) /* ty=Tensor[(10), float32] */; %2 = divide(1f "
       "/* ty=float32 */, %1) /* ty=Tensor[(10), float32] */; %3 = multiply(%2, %x1) /* ty=Tensor[(10), float32] */; "
       "%4 = negative(%a) /* ty=Tensor[(10), float32] */; %5 = multiply(%4, %3) /* ty=Tensor[(10), float32] */; %6 = "
       "multiply(%x, %3) /* ty=Tensor[(1, 10), float32] */; %7 = add(%5, %y) /* ty=Tensor[(10), float32] */; add(%6, "
       "%7) /* ty=Tensor[(1, 10), float32] */ }",
       true,
       {}},
      {"inline_before",
       "def @g1(%x1: Tensor[(1, 10), float32], Inline=1) { %x1 }\n\n"
       "def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }\n\n"
       "def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g1(%p0); %1 = @g2(%p0); add(%0, %1) }",
       false,
       {}},
      {"inline_after",
       "def @main(%p0: Tensor[(1, 10), float32]) { %0 = @g2(%p0); add(%p0, %0) }\n\n"
       "def @g2(%x2: Tensor[(1, 10), float32]) { %x2 }",
       false,
       {}},
      // on_device's attrs print inline rather than as meta[relay.attrs.OnDeviceAttrs][i].
      {"on_device_before",
       "def @main(%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) { %0 = add(%x, %y); %1 = sqrt(%0); "
       "%2 = on_device(%1, virtual_device=\"cuda\"); %3 = log(%0); %4 = subtract(%2, %3); %5 = exp(%4); "
       "on_device(%5, virtual_device=\"cuda\") }",
       false,
       {}},
      {"on_device_after",
       "fn (%x: Tensor[(1, 10), float32], %y: Tensor[(1, 10), float32]) -> Tensor[(1, 10), float32] { %0 = add(%x, "
       "%y) /* ty=Tensor[(1, 10), float32] */; %1 = device_copy(%0, src_device=\"cpu\", dst_device=\"cuda\") /* "
       "ty=Tensor[(1, 10), float32] */; %2 = sqrt(%1) /* ty=Tensor[(1, 10), float32] */; %3 = device_copy(%2, "
       "src_device=\"cuda\", dst_device=\"cpu\") /* ty=Tensor[(1, 10), float32] */; %4 = log(%0) /* ty=Tensor[(1, "
       "10), float32] */; %5 = subtract(%3, %4) /* ty=Tensor[(1, 10), float32] */; %6 = device_copy(%5, "
       "src_device=\"cpu\", dst_device=\"cuda\") /* ty=Tensor[(1, 10), float32] */; exp(%6) /* ty=Tensor[(1, 10), "
       "float32] */ }",
       true,
       {}},
      {"fuse_ops_before",
       "fn (%x: Tensor[(10, 20), float32]) { %0 = add(%x, %x); %1 = add(%0, %0); %2 = add(%1, %1); %3 = add(%2, "
       "%2); %4 = add(%3, %3); exp(%4) }",
       false,
       {}},
      {"fuse_ops_after",
       "fn (%x: Tensor[(10, 20), float32]) -> Tensor[(10, 20), float32] { %5 = fn (%p0: Tensor[(10, 20), float32], "
       "Primitive=1) -> Tensor[(10, 20), float32] { %0 = add(%p0, %p0) /* ty=Tensor[(10, 20), float32] */; %1 = "
       "add(%0, %0) /* ty=Tensor[(10, 20), float32] */; %2 = add(%1, %1) /* ty=Tensor[(10, 20), float32] */; %3 = "
       "add(%2, %2) /* ty=Tensor[(10, 20), float32] */; %4 = add(%3, %3) /* ty=Tensor[(10, 20), float32] */; exp(%4) "
       "/* ty=Tensor[(10, 20), float32] */ }; %5(%x) /* ty=Tensor[(10, 20), float32] */ }",
       true,
       {}},
      {"fuse_ops_two_groups",
       "fn (%x: Tensor[(20, 20), float32]) -> Tensor[(20), float32] { %2 = fn (%p01: Tensor[(20, 20), float32], "
       "Primitive=1) -> Tensor[(20), float32] { %0 = add(%p01, %p01) /* ty=Tensor[(20, 20), float32] */; %1 = "
       "add(%0, %0) /* ty=Tensor[(20, 20), float32] */; sum(%1, axis=[-1]) /* ty=Tensor[(20), float32] */ }; %3 = "
       "%2(%x) /* ty=Tensor[(20), float32] */; %4 = fn (%p0: Tensor[(20), float32], Primitive=1) -> Tensor[(20), "
       "float32] { add(%p0, %p0) /* ty=Tensor[(20), float32] */ }; %4(%3) /* ty=Tensor[(20), float32] */ }",
       true,
       {}},
      {"fold_scale_axis_before", testing::seed_texts::fold_scale_axis_before(), true, {}},
      {"fold_scale_axis_backward", testing::seed_texts::fold_scale_axis_backward(), true, {}},
      {"fold_scale_axis_folded",
       testing::seed_texts::fold_scale_axis_folded(testing::seed_texts::kFoldScaleAxisWeight),
       true,
       {}},
      {"combine_parallel_dense_before",
       "fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) { %0 = "
       "nn.dense(%x, %w1, units=None); %1 = nn.dense(%x, %w2, units=None); (%0, %1) }",
       false,
       {}},
      {"combine_parallel_dense_after",
       "fn (%x: Tensor[(3, 4), float32], %w1: Tensor[(5, 4), float32], %w2: Tensor[(5, 4), float32]) -> "
       "(Tensor[(3, 5), float32], Tensor[(3, 5), float32]) { %0 = (%x, %x); %1 = (%w1, %w2); %2 = stack(%0) /* "
       "ty=Tensor[(2, 3, 4), float32] */; %3 = stack(%1) /* ty=Tensor[(2, 5, 4), float32] */; %4 = "
       "nn.batch_matmul(%2, %3, transpose_b=True) /* ty=Tensor[(2, 3, 5), float32] */; %5 = split(%4, "
       "indices_or_sections=2) /* ty=(Tensor[(1, 3, 5), float32], Tensor[(1, 3, 5), float32]) */; %6 = %5.0; %7 = "
       "%5.1; %8 = squeeze(%6, axis=[0]) /* ty=Tensor[(3, 5), float32] */; %9 = squeeze(%7, axis=[0]) /* "
       "ty=Tensor[(3, 5), float32] */; (%8, %9) }",
       true,
       {"stack"}},
      {"combine_parallel_conv2d_before",
       "def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, "
       "1), float32]) -> (Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), "
       "float32]) { %0 = nn.conv2d(%x, %w1, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; %1 = "
       "nn.conv2d(%x, %w2, padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; %2 = nn.max_pool2d(%x, "
       "pool_size=[1, 1], padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; (%0, %1, %2) }",
       true,
       {}},
      {"combine_parallel_conv2d_after",
       "def @main(%x: Tensor[(1, 4, 16, 16), float32], %w1: Tensor[(4, 4, 1, 1), float32], %w2: Tensor[(4, 4, 1, "
       "1), float32]) -> (Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), float32], Tensor[(1, 4, 16, 16), "
       "float32]) { %0 = (%w1, %w2); %1 = concatenate(%0) /* ty=Tensor[(8, 4, 1, 1), float32] */; %2 = "
       "nn.conv2d(%x, %1, padding=[0, 0, 0, 0], channels=8) /* ty=Tensor[(1, 8, 16, 16), float32] */; %3 = "
       "strided_slice(%2, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode=\"size\", axes=None) /* "
       "ty=Tensor[(1, 4, 16, 16), float32] */; %4 = strided_slice(%2, begin=[0, 4], end=[-1, 4], strides=[1, 1], "
       "slice_mode=\"size\", axes=None) /* ty=Tensor[(1, 4, 16, 16), float32] */; %5 = nn.max_pool2d(%x, "
       "pool_size=[1, 1], padding=[0, 0, 0, 0]) /* ty=Tensor[(1, 4, 16, 16), float32] */; (%3, %4, %5) }",
       true,
       {}},
      {"onnx_resnet_stem",
       "def @main(%input.1: Tensor[(1, 3, 224, 224), float32], %v193: Tensor[(64, 3, 7, 7), float32], %v194: "
       "Tensor[(64), float32]) { %0 = nn.conv2d(%input.1, %v193, strides=[2, 2], padding=[3, 3, 3, 3], "
       "kernel_size=[7, 7]); %1 = nn.bias_add(%0, %v194); nn.relu(%1) }",
       false,
       {}},
  };
}

std::string strip_type_comments(std::string text) {
  for (size_t start; (start = text.find(" /* ty=")) != std::string::npos;) {
    size_t end = text.find("*/", start);
    text.erase(start, end + 2 - start);
  }
  return text;
}

// Replaces calls of op `from` (not ops whose name merely ends in it) with calls of `to`.
std::string rename_calls(std::string text, const std::string& from, const std::string& to) {
  auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (size_t at = text.find(from + "("); at != std::string::npos; at = text.find(from + "(", at + 1)) {
    if (at > 0 && part_of_name(text[at - 1])) continue;
    text.replace(at, from.size(), to);
  }
  return text;
}

bool is_expression(const std::string& text) { return text.rfind("fn ", 0) == 0; }

// Parses (running InferType when asked) and prints back.
struct RoundTrip {
  std::string printed;
  IRModule mod;
  Expr expr;
};

RoundTrip read_and_print(const std::string& text, bool infer, const PrintOptions& opts = {}) {
  RoundTrip r;
  if (is_expression(text)) {
    r.expr = parse_expr(text);
    if (infer) infer_expr_type(r.expr);
    r.printed = print_expr(r.expr, opts);
  } else {
    r.mod = parse_module(text);
    if (infer) r.mod = infer_types(r.mod);
    r.printed = print_module(r.mod, opts);
  }
  return r;
}

bool same_ir(const RoundTrip& a, const RoundTrip& b) {
  return a.expr ? structural_equal(a.expr, b.expr) : structural_equal(a.mod, b.mod);
}

class SeedRoundTrip : public ::testing::TestWithParam<Seed> {};

TEST_P(SeedRoundTrip, PrintsBackIdentically) {
  const Seed& seed = GetParam();
  // Without an op the seed needs, its calls become concatenate calls and types are not
  // checked: the text still exercises tuples, projections and the printing order.
  bool check_types = seed.typed;
  std::string expected = seed.text;
  for (const auto& op : seed.needs) {
    if (OpRegistry::global().find(op)) continue;
    check_types = false;
    expected = rename_calls(expected, op, "concatenate");
  }
  if (!check_types) expected = strip_type_comments(expected);
  PrintOptions opts;
  opts.show_types = check_types;

  RoundTrip first = read_and_print(expected, check_types, opts);
  EXPECT_EQ(squash(first.printed), squash(expected));

  RoundTrip second = read_and_print(first.printed, check_types, opts);
  EXPECT_EQ(second.printed, first.printed);
  EXPECT_TRUE(same_ir(first, second));
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedRoundTrip, ::testing::ValuesIn(seeds()),
                         [](const ::testing::TestParamInfo<Seed>& info) { return info.param.name; });

TEST(SeedRoundTrip, BatchNormVariablesKeepDistinctNames) {
  // relay.var("x") twice: the printer tells them apart as %x and %x1.
  Var x = make_var("x", tensor_type({1, 10}, DType::kFloat32));
  std::vector<Var> params{x};
  for (const char* name : {"x", "y", "a", "b"}) params.push_back(make_var(name, tensor_type({10}, DType::kFloat32)));
  Expr bn = call_op("nn.batch_norm", {params[0], params[1], params[2], params[3], params[4]});
  Expr dropout = call_op("nn.dropout", {make_tuple_get_item(bn, 0)});
  IRModule mod = IRModule::from_function(make_function(params, make_tuple_get_item(dropout, 0)));
  std::string text = print_module(mod);
  EXPECT_EQ(squash(text),
            "def @main(%x: Tensor[(1, 10), float32], %x1: Tensor[(10), float32], %y: Tensor[(10), float32], %a: "
            "Tensor[(10), float32], %b: Tensor[(10), float32]) { %0 = nn.batch_norm(%x, %x1, %y, %a, %b); %1 = %0.0; "
            "%2 = nn.dropout(%1); %2.0 }");
  EXPECT_TRUE(structural_equal(parse_module(text), mod));
}

}  // namespace
}  // namespace kiln
