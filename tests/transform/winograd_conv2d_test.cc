// WinogradConv2D's cost rule: which blocked 3x3 convolutions become nn.conv2d_winograd.
#include <gtest/gtest.h>

#include <string>

#include "kiln/attrs/nn.h"
#include "kiln/ir/op.h"
#include "kiln/ir/printer.h"
#include "kiln/ir/type_infer.h"
#include "kiln/ir/visit.h"
#include "kiln/support/error.h"
#include "kiln/transform/pass.h"

namespace kiln::testing {
namespace {

// One blocked (NCHW{x}c / OIHW{x}i16o) 3x3 stride-1 convolution of a constant weight.
IRModule blocked_conv(int64_t in, int64_t out, int64_t plane, int64_t in_block = 16) {
  Var x = make_var("x", tensor_type({1, in / in_block, plane, plane, in_block}, DType::kFloat32));
  Conv2DAttrs attrs;
  attrs.padding = {1, 1};
  attrs.channels = out;
  attrs.kernel_size = std::vector<int64_t>{3, 3};
  attrs.data_layout = cat("NCHW", in_block, "c");
  attrs.kernel_layout = cat("OIHW", in_block, "i16o");
  attrs.out_layout = "NCHW16c";
  Expr w = make_constant(NDArray::empty({out / 16, in / in_block, 3, 3, in_block, 16}, DType::kFloat32));
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

TEST(WinogradConv2D, EnoughTilesAndChannelsGoWinograd) {
  EXPECT_TRUE(goes_winograd(blocked_conv(64, 64, 56)));    // ResNet's 56x56x64: 196 tiles
  EXPECT_TRUE(goes_winograd(blocked_conv(128, 128, 28)));  // 28x28x128: 49 tiles
  EXPECT_TRUE(goes_winograd(blocked_conv(512, 512, 28)));  // VGG's 28x28x512: 49 tiles
  EXPECT_TRUE(goes_winograd(blocked_conv(32, 32, 56)));    // 32 * 32 / 64 = 16 products per transform
  EXPECT_TRUE(goes_winograd(blocked_conv(16, 32, 112)));   // 10.7
}

TEST(WinogradConv2D, FewTilesStayDirect) {
  EXPECT_FALSE(goes_winograd(blocked_conv(512, 512, 7)));  // ResNet's 7x7x512: 4 tiles
  const IRModule resnet_14 = blocked_conv(256, 256, 14);   // 16 tiles, one per 16 channels
  EXPECT_FALSE(goes_winograd(resnet_14)) << print_module(resnet_14);
  EXPECT_FALSE(goes_winograd(blocked_conv(128, 32, 14)));  // DenseNet-121's 14x14 layers
  WinogradConv2DOptions few_tiles;
  few_tiles.min_tiles = 16;
  EXPECT_TRUE(goes_winograd(resnet_14, few_tiles));
}

TEST(WinogradConv2D, FewTilesPerChannelOrProductsStayDirect) {
  const IRModule deep_28 = blocked_conv(1024, 1024, 28);  // 49 tiles for 1024 channels
  EXPECT_FALSE(goes_winograd(deep_28));
  WinogradConv2DOptions per_tile;
  per_tile.channels_per_tile = 32;
  EXPECT_TRUE(goes_winograd(deep_28, per_tile));
  EXPECT_FALSE(goes_winograd(blocked_conv(16, 16, 112)));  // 16 * 16 / 32 = 8 products per transform
  WinogradConv2DOptions force;
  force.force = true;
  EXPECT_TRUE(goes_winograd(blocked_conv(16, 16, 112), force));
}

TEST(WinogradConv2D, ImageStemStaysDirect) {
  // NCHW1c data of 3 channels: transforming its tiles costs about what the products save.
  EXPECT_FALSE(goes_winograd(blocked_conv(3, 32, 224, 1)));
}

}  // namespace
}  // namespace kiln::testing
