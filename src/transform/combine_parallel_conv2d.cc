// CombineParallelConv2D (Relay's): groups=1 convolutions of the same data with the same
// window, layouts, dtypes and kernel extents become one convolution whose weight joins theirs
// along the output channels; each is the slice of its channels of the result:
//   %0 = nn.conv2d(%x, %w1);  %1 = nn.conv2d(%x, %w2)      (%w1: (4, 4, 1, 1), %w2: (4, 4, 1, 1))
//   ->
//   %0 = concatenate((%w1, %w2));  %1 = nn.conv2d(%x, %0, channels=8);
//   strided_slice(%1, begin=[0, 0], end=[-1, 4], strides=[1, 1], slice_mode="size"), ... begin=[0, 4] ...
// Follow-on bias_add, relu, add / multiply of per-channel values are joined too. FoldConstant
// then evaluates the joined constant weights.
#include "kiln/attrs/nn.h"
#include "kiln/attrs/window.h"
#include "kiln/transform/pass.h"
#include "transform/combine_parallel.h"

namespace kiln {

namespace {

Conv2DAttrs conv_attrs(const CallNode& call) { return attrs_from<Conv2DAttrs>(call.attrs, "nn.conv2d"); }

class ParallelConv2DCombiner : public ParallelOpConcatCombiner {
 public:
  explicit ParallelConv2DCombiner(int64_t min_num_branches) : ParallelOpConcatCombiner("nn.conv2d", min_num_branches) {}

 protected:
  // Plain NCHW / OIHW convolutions of known output channels; blocked layouts and grouped
  // convolutions would need their channels regrouped.
  bool is_supported_op(const CallNode& call) const override {
    if (call.args.size() != 2) return false;
    const Conv2DAttrs attrs = conv_attrs(call);
    const TensorTypeNode* data = tensor_type_of(*call.args[0]);
    const TensorTypeNode* weight = tensor_type_of(*call.args[1]);
    return attrs.groups == 1 && attrs.data_layout == "NCHW" && attrs.kernel_layout == "OIHW" &&
           (attrs.out_layout.empty() || attrs.out_layout == "NCHW") && data && weight && data->ndim() == 4 &&
           weight->ndim() == 4 && weight->shape[0] > 0 && tensor_type_of(call);
  }

  bool can_ops_be_combined(const CallNode& a, const CallNode& b) const override {
    const Conv2DAttrs x = conv_attrs(a), y = conv_attrs(b);
    const TensorTypeNode& wa = *tensor_type_of(*a.args[1]);
    const TensorTypeNode& wb = *tensor_type_of(*b.args[1]);
    return spatial_values(x.strides, 2) == spatial_values(y.strides, 2) &&
           padding_values(x.padding, 2) == padding_values(y.padding, 2) &&
           spatial_values(x.dilation, 2) == spatial_values(y.dilation, 2) && x.groups == y.groups &&
           x.data_layout == y.data_layout && x.kernel_layout == y.kernel_layout && x.out_layout == y.out_layout &&
           x.out_dtype == y.out_dtype && wa.dtype == wb.dtype && wa.shape[1] == wb.shape[1] &&
           wa.shape[2] == wb.shape[2] && wa.shape[3] == wb.shape[3];
  }

  Expr make_combined_op(const Group& group) const override { return call_on_joined_weights(group, "channels"); }

  int64_t channel_axis(const CallNode&) const override { return 1; }
};

}  // namespace

IRModule combine_parallel_conv2d_pass(const IRModule& mod, int64_t min_num_branches) {
  return ParallelConv2DCombiner(min_num_branches).combine(mod);
}

}  // namespace kiln
