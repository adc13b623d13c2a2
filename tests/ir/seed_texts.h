// The seed notes' FoldScaleAxis example (TVM's printed Relay), shared by the round-trip test
// of the IR text and the pass's golden test. Metadata is written as kiln's printer writes it:
// weight (2, 1, 3, 3) = arange(18) * 0.25 - 2, scale (2, 1, 1) = [0.5, -1.5].
#pragma once

#include <string>

namespace kiln::testing::seed_texts {

inline const std::string kFoldScaleAxisWeight =
    R"({"dtype":"float32","shape":[2,1,3,3],"data":"AAAAwAAA4L8AAMC/AACgvwAAgL8AAEC/AAAAvwAAgL4AAAAAAACAPgAAAD8AAEA/AACAPwAAoD8AAMA/AADgPwAAAEAAABBA"})";
inline const std::string kFoldScaleAxisScale = R"({"dtype":"float32","shape":[2,1,1],"data":"AAAAPwAAwL8="})";

inline std::string fold_scale_axis_before() {
  return "fn (%x: Tensor[(1, 1, 10, 10), float32]) -> Tensor[(1, 2, 10, 10), float32] { %0 = nn.conv2d(%x, "
         "meta[relay.Constant][0] /* ty=Tensor[(2, 1, 3, 3), float32] */, padding=[1, 1, 1, 1], channels=2, "
         "kernel_size=[3, 3]) /* ty=Tensor[(1, 2, 10, 10), float32] */; multiply(%0, meta[relay.Constant][1] /* "
         "ty=Tensor[(2, 1, 1), float32] */) /* ty=Tensor[(1, 2, 10, 10), float32] */ }\n\n"
         "#[metadata]\n{\"relay.Constant\": [\n" +
         kFoldScaleAxisWeight + ",\n" + kFoldScaleAxisScale + "\n]}";
}

// TVM numbered these constants by creation; kiln numbers them by first appearance.
inline std::string fold_scale_axis_backward() {
  return "fn (%x: Tensor[(1, 1, 10, 10), float32]) -> Tensor[(1, 2, 10, 10), float32] { %0 = "
         "squeeze(meta[relay.Constant][0] /* ty=Tensor[(2, 1, 1), float32] */, axis=[1, 2]) /* ty=Tensor[(2), "
         "float32] */; %1 = expand_dims(%0, axis=1, num_newaxis=3) /* ty=Tensor[(2, 1, 1, 1), float32] */; %2 = "
         "multiply(meta[relay.Constant][1] /* ty=Tensor[(2, 1, 3, 3), float32] */, %1) /* ty=Tensor[(2, 1, 3, 3), "
         "float32] */; nn.conv2d(%x, %2, padding=[1, 1, 1, 1], channels=2, kernel_size=[3, 3]) /* ty=Tensor[(1, 2, "
         "10, 10), float32] */ }\n\n"
         "#[metadata]\n{\"relay.Constant\": [\n" +
         kFoldScaleAxisScale + ",\n" + kFoldScaleAxisWeight + "\n]}";
}

// The seed prints only the IR, so its metadata repeats the unscaled weight; `weight_json` is
// the constant to show.
inline std::string fold_scale_axis_folded(const std::string& weight_json) {
  return "fn (%x: Tensor[(1, 1, 10, 10), float32]) -> Tensor[(1, 2, 10, 10), float32] { nn.conv2d(%x, "
         "meta[relay.Constant][0] /* ty=Tensor[(2, 1, 3, 3), float32] */, padding=[1, 1, 1, 1], channels=2, "
         "kernel_size=[3, 3]) /* ty=Tensor[(1, 2, 10, 10), float32] */ }\n\n"
         "#[metadata]\n{\"relay.Constant\": [\n" +
         weight_json + "\n]}";
}

}  // namespace kiln::testing::seed_texts
