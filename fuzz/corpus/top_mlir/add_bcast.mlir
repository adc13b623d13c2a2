#loc = loc(unknown)
module attributes {module.chip = "ALL", module.name = "add_bcast", module.platform = "TPULANG", module.state = "TOP_F32", module.weight_file = "add_bcast_TOP_F32_all_weight.npz"} {
  func.func @main(%arg0: tensor<3x4x5xf32> loc(unknown), %arg1: tensor<5xf32> loc(unknown)) -> tensor<3x4x5xf32> {
    %0 = "top.Input"(%arg0) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32> loc(#loc1)
    %1 = "top.Input"(%arg1) : (tensor<5xf32>) -> tensor<5xf32> loc(#loc2)
    %2 = "top.Add"(%0, %1) {do_relu = false} : (tensor<3x4x5xf32>, tensor<5xf32>) -> tensor<3x4x5xf32> loc(#loc3)
    return %2 : tensor<3x4x5xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("x")
#loc2 = loc("y")
#loc3 = loc("sum")
