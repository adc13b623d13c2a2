#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "maxpool_2d_default", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "maxpool_2d_default_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x32x32xf32> loc(unknown)) -> tensor<1x3x31x31xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32> loc(#loc1)
    %1 = "top.MaxPool"(%0) {ceil_mode = false, do_relu = false, kernel_shape = [2, 2], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x3x32x32xf32>) -> tensor<1x3x31x31xf32> loc(#loc2)
    return %1 : tensor<1x3x31x31xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("x")
#loc2 = loc("y")
