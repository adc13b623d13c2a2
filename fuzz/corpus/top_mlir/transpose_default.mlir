#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "transpose_default", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "transpose_default_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<2x3x4xf32> loc(unknown)) -> tensor<4x3x2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc(#loc1)
    %1 = "top.Permute"(%0) {order = [2, 1, 0]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32> loc(#loc2)
    return %1 : tensor<4x3x2xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("data")
#loc2 = loc("transposed")
