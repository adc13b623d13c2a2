// WinogradConv2D's cost rule: which blocked 3x3 convolutions become nn.conv2d_winograd.
#include <gtest/gtest.h>

#include <string>

#include "kiln/attrs/nn.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/transform/pass.h"

namespace kiln::testing {
namespace {

// One blocked (NCHW16c / OIHW16i16o) 3x3 stride-1 convolution of a constant weight.
IRModule blocked_conv(int64_t in, int64_t out, int64_t plane) {
  Var x = make_var("x", tensor_type({1, in / 16, plane, plane, 16}, DType::kFloat32));
  Conv2DAttrs attrs;
  attrs.padding = {1, 1};
  attrs.channels = out;
  attrs.kernel_size = std::vector<int64_t>{3, 3};
  attrs.data_layout = "NCHW16c";
  attrs.kernel_layout = "OIHW16i16o";
  attrs.out_layout = "NCHW16c";
  Expr w = make_constant(NDArray::empty({out / 16, in / 16, 3, 3, 16, 16}, DType::kFloat32));
  return infer_types(IRModule::from_function(make_function({x}, call_op("nn.conv2d", {x, w}, attrs))));
}

bool goes_winograd(const IRModule& mod, const WinogradConv2DOptions& options = {}) {
  IRModule out = winograd_conv2d_pass(mod, options, false);
  bool winograd = false;
  post_order_visit(out.lookup("main"), [&](const Expr& e) {
    const auto* call = as<CallNode>(e);
    winograd = winograd || (call && call->op() && call->op()->name == "nn.conv2d_winograd");
  });
  return winograd;
}

TEST(WinogradConv2D, ManyTilesOfManyChannelsGoWinograd) {
  EXPECT_TRUE(goes_winograd(blocked_conv(128, 128, 28)));  // ResNet's 28x28x128: 49 tiles
  EXPECT_TRUE(goes_winograd(blocked_conv(64, 64, 56)));    // 196 tiles
}

TEST(WinogradConv2D, SixteenTilesStayDirect) {
  // DenseNet-121's 14x14 128 -> 32: 16 tiles, each of the 36 products 16 rows long.
  const IRModule dense_block = blocked_conv(128, 32, 14);
  EXPECT_FALSE(goes_winograd(dense_block)) << print_module(dense_block);
  WinogradConv2DOptions few_tiles;
  few_tiles.min_tiles = 16;
  EXPECT_TRUE(goes_winograd(dense_block, few_tiles));
}

TEST(WinogradConv2D, FewChannelsPerTileOrProductsStayDirect) {
  EXPECT_FALSE(goes_winograd(blocked_conv(256, 256, 14)));  // 16 tiles for 256 channels
  EXPECT_FALSE(goes_winograd(blocked_conv(32, 32, 56)));    // 32 * 32 / 64 = 16 products per transform
  WinogradConv2DOptions force;
  force.force = true;
  EXPECT_TRUE(goes_winograd(blocked_conv(32, 32, 56), force));
}

}  // namespace
}  // namespace kiln::testing
