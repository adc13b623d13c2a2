#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "concat_2d_axis_0", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "concat_2d_axis_0_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<2x2xf32> loc(unknown), %arg1: tensor<2x2xf32> loc(unknown)) -> tensor<4x2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc1)
    %1 = "top.Input"(%arg1) : (tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc2)
    %2 = "top.Concat"(%0, %1) {axis = 0 : si32, do_relu = false} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32> loc(#loc3)
    return %2 : tensor<4x2xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("value0")
#loc2 = loc("value1")
#loc3 = loc("output")
