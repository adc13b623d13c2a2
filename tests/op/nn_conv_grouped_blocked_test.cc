// Grouped blocked convolutions (NCHW{x}c data, OIHW{x}i{y}o weight of shape (O/y, (C/G)/x, KH,
// KW, x, y), groups G splitting whole channel blocks): the type relation and its errors, and the
// reference kernel and the generated kernel against the plain grouped convolution of the same
// tensors in NCHW / OIHW — 3x3 (strides 1 and 2, padding 1), 1x1, one and two input and output
// blocks per group, a width computed wider than the output, batch 2, and 8-wide blocks (the
// generic schedule). 16-wide output blocks in float32 run kiln_conv_nchwc_f32, whose tiles of
// output blocks must stay inside a group (RegNetY's group width 8 expanded to one 16-channel
// block per group is the case this serves).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/attrs/layout.h"
#include "kiln/support/strings.h"
#include "op/compute_test_util.h"
#include "op_test_util.h"

namespace kiln::testing {
namespace {

constexpr const char* kTileCall = "kiln_conv_nchwc_f32(";

// A grouped convolution in NCHW terms and the blocks it runs in.
struct GroupedConv {
  Shape data;  // N, C, H, W
  int64_t out_channels, groups, kernel, stride, pad, x, y;
  std::string dtype = "float32";

  Shape weight() const { return {out_channels, data[1] / groups, kernel, kernel}; }
  std::string data_layout() const { return Layout::nchw(x); }
  std::string kernel_layout() const { return cat("OIHW", x, "i", y, "o"); }
  std::string out_layout() const { return Layout::nchw(y); }
  std::string str() const {
    return cat(shape_str(data), " -> ", out_channels, " groups=", groups, " ", kernel, "x", kernel, " stride ", stride,
               " pad ", pad, " blocks ", x, "/", y, " ", dtype);
  }
};

Attrs plain_attrs(const GroupedConv& c) {
  return {{"groups", AttrValue(c.groups)},
          {"strides", AttrValue(std::vector<int64_t>{c.stride, c.stride})},
          {"padding", AttrValue(std::vector<int64_t>{c.pad, c.pad})}};
}

Attrs blocked_attrs(const GroupedConv& c) {
  Attrs attrs = plain_attrs(c);
  attrs.set("data_layout", AttrValue(c.data_layout()));
  attrs.set("kernel_layout", AttrValue(c.kernel_layout()));
  attrs.set("out_layout", AttrValue(c.out_layout()));
  return attrs;
}

NDArray relaid(const NDArray& a, const std::string& src, const std::string& dst) {
  return run_op("layout_transform", {a}, {{"src_layout", AttrValue(src)}, {"dst_layout", AttrValue(dst)}}).at(0);
}

NDArray random_array(const Shape& shape, DType dtype, std::mt19937& gen) {
  std::uniform_real_distribution<double> dist(-1, 1);
  NDArray a = NDArray::empty(shape, dtype);
  for (int64_t i = 0; i < a.numel(); ++i) a.set(i, dist(gen));
  return a;
}

std::string dims(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out;
}

// The blocked convolution as a Primitive function of its blocked operands, with `tail` after it.
std::string blocked_fn(const GroupedConv& c, const Shape& data, const Shape& weight, const std::string& tail = "%0") {
  return cat("fn (%x: Tensor[(", dims(data), "), ", c.dtype, "], %w: Tensor[(", dims(weight), "), ", c.dtype,
             "], Primitive=1) { %0 = nn.conv2d(%x, %w, strides=[", c.stride, ", ", c.stride, "], padding=[", c.pad,
             ", ", c.pad, "], groups=", c.groups, ", data_layout=\"", c.data_layout(), "\", kernel_layout=\"",
             c.kernel_layout(), "\", out_layout=\"", c.out_layout(), "\"); ", tail, " }");
}

// `fn` compiled to C and run on `inputs`: its output and the generated source.
std::pair<NDArray, std::string> compile_and_run(const std::string& fn_text, std::vector<NDArray> inputs) {
  Expr parsed = parse_expr(fn_text);
  infer_expr_type(parsed);
  Function fn = as_function(parsed);
  const std::string source = codegen::generate_c({backend::lower_primitive(*fn, "kernel", Target::host())});
  codegen::CCompilerOptions options;
  options.cache_dir = compute_test_cache_dir();
  LoadedKernels lib(codegen::CCompiler(options).compile(source));
  const TensorTypeNode& out_type = expect_tensor(fn->body->checked_type(), "output");
  NDArray out = NDArray::empty(out_type.shape, out_type.dtype);
  std::vector<void*> args;
  for (NDArray& in : inputs) args.push_back(in.raw());
  args.push_back(out.raw());
  EXPECT_EQ(lib.call("kernel", args), 0);
  return {out, source};
}

void expect_near_all(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.at(i);
    ASSERT_NEAR(got.at(i), w, 1e-4 + 1e-4 * std::abs(w)) << what << ": element " << i;
  }
}

// The reference kernel and the generated kernel on the blocked operands, each laid back out in
// NCHW, against the plain grouped convolution of the NCHW / OIHW operands; returns the source.
std::string expect_blocked_matches_nchw(const GroupedConv& c) {
  SCOPED_TRACE(c.str());
  std::mt19937 gen(5);
  const DType dtype = parse_dtype(c.dtype);
  const NDArray data = random_array(c.data, dtype, gen), weight = random_array(c.weight(), dtype, gen);
  const NDArray want = run_op("nn.conv2d", {data, weight}, plain_attrs(c)).at(0);
  const NDArray blocked_data = relaid(data, "NCHW", c.data_layout());
  const NDArray blocked_weight = relaid(weight, "OIHW", c.kernel_layout());
  EXPECT_EQ(blocked_weight.shape()[1], c.data[1] / c.groups / c.x) << "weight axis 1: one group's input blocks";

  const NDArray interpreted = run_op("nn.conv2d", {blocked_data, blocked_weight}, blocked_attrs(c)).at(0);
  expect_near_all(relaid(interpreted, c.out_layout(), "NCHW"), want, "reference kernel");
  auto [compiled, source] =
      compile_and_run(blocked_fn(c, blocked_data.shape(), blocked_weight.shape()), {blocked_data, blocked_weight});
  expect_near_all(relaid(compiled, c.out_layout(), "NCHW"), want, "generated kernel");
  return source;
}

TEST(GroupedBlockedConv2d, RelationTakesOneGroupsInputBlocks) {
  Attrs attrs{{"data_layout", AttrValue("NCHW16c")},
              {"kernel_layout", AttrValue("OIHW16i16o")},
              {"out_layout", AttrValue("NCHW16c")},
              {"groups", AttrValue(int64_t{3})},
              {"padding", AttrValue(std::vector<int64_t>{1, 1})}};
  EXPECT_EQ(type_str(infer_op("nn.conv2d", {f32({1, 3, 6, 6, 16}), f32({6, 1, 3, 3, 16, 16})}, attrs)),
            "Tensor[(1, 6, 6, 6, 16), float32]");
  // Weight axis 1 holds all the data's blocks, as a groups=1 weight would.
  const std::string all_blocks = infer_op_error("nn.conv2d", {f32({1, 3, 6, 6, 16}), f32({6, 3, 3, 3, 16, 16})}, attrs);
  EXPECT_NE(all_blocks.find("input channel blocks per group"), std::string::npos) << all_blocks;
  EXPECT_NE(all_blocks.find("groups=3"), std::string::npos) << all_blocks;
  // Groups that would split a block: 2 groups of 1.5 input blocks, or of 1.5 output blocks.
  attrs.set("groups", AttrValue(int64_t{2}));
  const std::string split_data = infer_op_error("nn.conv2d", {f32({1, 3, 6, 6, 16}), f32({4, 1, 3, 3, 16, 16})}, attrs);
  EXPECT_NE(split_data.find("input channel blocks (axis 1) of 'data'"), std::string::npos) << split_data;
  EXPECT_NE(split_data.find("whole channel blocks"), std::string::npos) << split_data;
  const std::string split_out = infer_op_error("nn.conv2d", {f32({1, 4, 6, 6, 16}), f32({3, 2, 3, 3, 16, 16})}, attrs);
  EXPECT_NE(split_out.find("output channel blocks (axis 0) of 'weight'"), std::string::npos) << split_out;
  // groups=1 still reads every data block.
  attrs.set("groups", AttrValue(int64_t{1}));
  EXPECT_NE(infer_op_error("nn.conv2d", {f32({1, 3, 6, 6, 16}), f32({6, 1, 3, 3, 16, 16})}, attrs)
                .find("input channel blocks (weight axis 1)"),
            std::string::npos);
}

// Each case matches the plain convolution and runs kiln_conv_nchwc_f32.
void expect_tiles_match_nchw(const std::vector<GroupedConv>& cases) {
  for (const GroupedConv& c : cases) {
    const std::string source = expect_blocked_matches_nchw(c);
    EXPECT_NE(source.find(kTileCall), std::string::npos) << c.str();
  }
}

// One 16-channel block per group (C = O = 48, G = 3): 3x3 at strides 1 and 2, and 1x1.
TEST(GroupedBlockedConv2d, OneBlockPerGroupRunsTheTile) {
  const std::vector<GroupedConv> cases = {
      {{1, 48, 10, 10}, 48, 3, 3, 1, 1, 16, 16},
      {{1, 48, 11, 11}, 48, 3, 3, 2, 1, 16, 16},
      {{1, 48, 7, 9}, 48, 3, 1, 1, 0, 16, 16},
  };
  expect_tiles_match_nchw(cases);
}

// Strides past 2: patch embeddings (ViT's 16x16 windows at stride 16 over one block of three
// channels, a 4x4 stride-4 stem over two-channel blocks), and a 3x3 window at stride 3 that
// leaves columns unread.
TEST(GroupedBlockedConv2d, WideStridesRunTheTile) {
  const std::vector<GroupedConv> cases = {
      {{1, 3, 32, 48}, 32, 1, 16, 16, 0, 3, 16},
      {{1, 4, 17, 18}, 16, 1, 4, 4, 0, 2, 16},
      {{1, 16, 13, 14}, 16, 1, 3, 3, 1, 16, 16},
  };
  expect_tiles_match_nchw(cases);
}

// Several blocks per group: two input blocks (C = 64, G = 2; C = 96, G = 3), two output blocks
// of one input block each (O = 96, G = 3: tiles of 3 output blocks would straddle two groups),
// a width of 17 computed as 18 with batch 2, and 8-wide input blocks.
TEST(GroupedBlockedConv2d, SeveralBlocksPerGroupKeepTilesInsideAGroup) {
  const std::vector<GroupedConv> cases = {
      {{1, 64, 8, 8}, 64, 2, 3, 1, 1, 16, 16},
      {{1, 96, 9, 9}, 96, 3, 3, 2, 1, 16, 16},
      {{1, 48, 7, 7}, 96, 3, 3, 1, 1, 16, 16},
      {{1, 48, 6, 14}, 96, 3, 1, 1, 0, 16, 16},
      {{2, 64, 5, 17}, 64, 2, 3, 1, 1, 16, 16},
      {{1, 32, 6, 6}, 64, 2, 3, 1, 1, 8, 16},  // 2 input blocks of 8 per group
  };
  expect_tiles_match_nchw(cases);
}

// 8-wide output blocks run kiln_conv_nchwc_f32 where 8 lanes are the host's vector (AVX2), else
// the generated register tile, as float64 does everywhere.
TEST(GroupedBlockedConv2d, EightWideBlocksAndFloat64Match) {
  GroupedConv f64{{1, 48, 6, 6}, 48, 3, 3, 1, 1, 16, 16};
  f64.dtype = "float64";
  const bool eight_lane_host = host_vector_lanes() == 8;
  const std::vector<std::pair<GroupedConv, bool>> cases = {
      {{{1, 32, 9, 9}, 32, 2, 3, 1, 1, 8, 8}, eight_lane_host},
      {{{1, 32, 9, 9}, 32, 4, 3, 2, 1, 8, 8}, eight_lane_host},
      // 1 input block of 16, 2 output blocks of 8 per group
      {{{1, 32, 6, 6}, 32, 2, 3, 1, 1, 16, 8}, eight_lane_host},
      {f64, false},
  };
  for (const auto& [c, tile] : cases) {
    const std::string source = expect_blocked_matches_nchw(c);
    EXPECT_EQ(source.find(kTileCall) != std::string::npos, tile) << c.str();
  }
}

// A fused bias and ReLU (2 output blocks per group, stride 2), applied to the tile's accumulators
// in registers, compiled against the interpreter.
TEST(GroupedBlockedConv2d, FusedTailMatchesTheInterpreter) {
  CompareOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-4;
  const std::string fn =
      "fn (%x: Tensor[(1, 3, 8, 8, 16), float32], %w: Tensor[(6, 1, 3, 3, 16, 16), float32], "
      "%b: Tensor[(1, 6, 1, 1, 16), float32], Primitive=1) { %0 = nn.conv2d(%x, %w, strides=[2, "
      "2], padding=[1, 1], groups=3, data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", "
      "out_layout=\"NCHW16c\"); nn.relu(add(%0, %b)) }";
  const std::string source = expect_compiled_matches_interpreter(fn, o);
  EXPECT_NE(source.find("kiln_conv_nchwc_ep_f32("), std::string::npos) << source;
}

}  // namespace
}  // namespace kiln::testing
