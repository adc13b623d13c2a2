#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "conv_with_strides_padding", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "conv_with_strides_padding_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x7x5xf32> loc(unknown), %arg1: tensor<1x1x3x3xf32> loc(unknown)) -> tensor<1x1x4x3xf32> {
    %0 = "top.None"() : () -> none loc(#loc)
    %1 = "top.Input"(%arg0) : (tensor<1x1x7x5xf32>) -> tensor<1x1x7x5xf32> loc(#loc1)
    %2 = "top.Input"(%arg1) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc(#loc2)
    %3 = "top.Conv"(%1, %2, %0) {dilations = [1, 1], do_relu = false, group = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x1x7x5xf32>, tensor<1x1x3x3xf32>, none) -> tensor<1x1x4x3xf32> loc(#loc3)
    return %3 : tensor<1x1x4x3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("x")
#loc2 = loc("W")
#loc3 = loc("y")
