// The list of op families. Registration is explicit (no static initialisers) so that
// linking kiln as a static library cannot silently drop an op.
#include "kiln/ir/op.h"

namespace kiln {

void register_nn_conv_ops(OpRegistry& registry);
void register_nn_dense_ops(OpRegistry& registry);
void register_nn_pool_ops(OpRegistry& registry);
void register_nn_norm_ops(OpRegistry& registry);
void register_nn_softmax_ops(OpRegistry& registry);
void register_nn_activation_ops(OpRegistry& registry);
void register_nn_bias_add_ops(OpRegistry& registry);
void register_nn_pad_ops(OpRegistry& registry);
void register_nn_loss_ops(OpRegistry& registry);
void register_nn_instance_norm_ops(OpRegistry& registry);
void register_nn_lrn_ops(OpRegistry& registry);
void register_tensor_unary_ops(OpRegistry& registry);
void register_tensor_binary_ops(OpRegistry& registry);
void register_tensor_where_ops(OpRegistry& registry);
void register_tensor_reduce_ops(OpRegistry& registry);
void register_tensor_init_ops(OpRegistry& registry);
void register_tensor_cumsum_ops(OpRegistry& registry);
void register_tensor_topk_ops(OpRegistry& registry);
void register_tensor_einsum_ops(OpRegistry& registry);
void register_tensor_det_ops(OpRegistry& registry);
void register_transform_reshape_ops(OpRegistry& registry);
void register_transform_transpose_ops(OpRegistry& registry);
void register_transform_concat_ops(OpRegistry& registry);
void register_transform_slice_ops(OpRegistry& registry);
void register_transform_gather_scatter_ops(OpRegistry& registry);
void register_transform_one_hot_ops(OpRegistry& registry);
void register_transform_unique_ops(OpRegistry& registry);
void register_transform_tfidf_vectorizer_ops(OpRegistry& registry);
void register_image_resize_ops(OpRegistry& registry);
void register_image_grid_sample_ops(OpRegistry& registry);
void register_vision_roi_align_ops(OpRegistry& registry);
void register_vision_nms_ops(OpRegistry& registry);
void register_annotation_device_ops(OpRegistry& registry);
void register_qnn_quantize_ops(OpRegistry& registry);
void register_qnn_conv2d_ops(OpRegistry& registry);
void register_qnn_matmul_ops(OpRegistry& registry);
void register_signal_dft_ops(OpRegistry& registry);
void register_signal_window_ops(OpRegistry& registry);
void register_random_ops(OpRegistry& registry);
void register_control_unreachable_ops(OpRegistry& registry);

void register_builtin_ops() {
  static const bool done = [] {
    OpRegistry& r = OpRegistry::global();
    register_nn_conv_ops(r);
    register_nn_dense_ops(r);
    register_nn_pool_ops(r);
    register_nn_norm_ops(r);
    register_nn_softmax_ops(r);
    register_nn_activation_ops(r);
    register_nn_bias_add_ops(r);
    register_nn_pad_ops(r);
    register_nn_loss_ops(r);
    register_nn_instance_norm_ops(r);
    register_nn_lrn_ops(r);
    register_tensor_unary_ops(r);
    register_tensor_binary_ops(r);
    register_tensor_where_ops(r);
    register_tensor_reduce_ops(r);
    register_tensor_init_ops(r);
    register_tensor_cumsum_ops(r);
    register_tensor_topk_ops(r);
    register_tensor_einsum_ops(r);
    register_tensor_det_ops(r);
    register_transform_reshape_ops(r);
    register_transform_transpose_ops(r);
    register_transform_concat_ops(r);
    register_transform_slice_ops(r);
    register_transform_gather_scatter_ops(r);
    register_transform_one_hot_ops(r);
    register_transform_unique_ops(r);
    register_transform_tfidf_vectorizer_ops(r);
    register_image_resize_ops(r);
    register_image_grid_sample_ops(r);
    register_vision_roi_align_ops(r);
    register_vision_nms_ops(r);
    register_annotation_device_ops(r);
    register_qnn_quantize_ops(r);
    register_qnn_conv2d_ops(r);
    register_qnn_matmul_ops(r);
    register_signal_dft_ops(r);
    register_signal_window_ops(r);
    register_random_ops(r);
    register_control_unreachable_ops(r);
    return true;
  }();
  (void)done;
}

}  // namespace kiln
