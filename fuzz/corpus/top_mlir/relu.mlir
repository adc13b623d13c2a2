#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "relu", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "relu_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<3x4x5xf32> loc(unknown)) -> tensor<3x4x5xf32> {
    %0 = "top.Input"(%arg0) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32> loc(#loc1)
    %1 = "top.Relu"(%0) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32> loc(#loc2)
    return %1 : tensor<3x4x5xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("x")
#loc2 = loc("y")
