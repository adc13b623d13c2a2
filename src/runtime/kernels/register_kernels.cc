// The list of reference-kernel families, registered explicitly on first use.
#include "kiln/runtime/kernel_registry.h"
#include "kiln/support/error.h"

namespace kiln {

void register_nn_conv_kernels(KernelRegistry& registry);
void register_nn_dense_kernels(KernelRegistry& registry);
void register_nn_pool_kernels(KernelRegistry& registry);
void register_nn_norm_kernels(KernelRegistry& registry);
void register_nn_softmax_kernels(KernelRegistry& registry);
void register_nn_activation_kernels(KernelRegistry& registry);
void register_nn_bias_add_kernels(KernelRegistry& registry);
void register_nn_pad_kernels(KernelRegistry& registry);
void register_nn_loss_kernels(KernelRegistry& registry);
void register_nn_instance_norm_kernels(KernelRegistry& registry);
void register_nn_lrn_kernels(KernelRegistry& registry);
void register_tensor_unary_kernels(KernelRegistry& registry);
void register_tensor_binary_kernels(KernelRegistry& registry);
void register_tensor_where_kernels(KernelRegistry& registry);
void register_tensor_reduce_kernels(KernelRegistry& registry);
void register_tensor_init_kernels(KernelRegistry& registry);
void register_tensor_cumsum_kernels(KernelRegistry& registry);
void register_tensor_topk_kernels(KernelRegistry& registry);
void register_tensor_einsum_kernels(KernelRegistry& registry);
void register_tensor_det_kernels(KernelRegistry& registry);
void register_transform_reshape_kernels(KernelRegistry& registry);
void register_transform_transpose_kernels(KernelRegistry& registry);
void register_transform_concat_kernels(KernelRegistry& registry);
void register_transform_slice_kernels(KernelRegistry& registry);
void register_transform_gather_scatter_kernels(KernelRegistry& registry);
void register_transform_one_hot_kernels(KernelRegistry& registry);
void register_transform_unique_kernels(KernelRegistry& registry);
void register_transform_tfidf_vectorizer_kernels(KernelRegistry& registry);
void register_image_resize_kernels(KernelRegistry& registry);
void register_image_grid_sample_kernels(KernelRegistry& registry);
void register_vision_roi_align_kernels(KernelRegistry& registry);
void register_vision_nms_kernels(KernelRegistry& registry);
void register_annotation_device_kernels(KernelRegistry& registry);
void register_qnn_quantize_kernels(KernelRegistry& registry);
void register_qnn_conv2d_kernels(KernelRegistry& registry);
void register_qnn_matmul_kernels(KernelRegistry& registry);
void register_signal_dft_kernels(KernelRegistry& registry);
void register_signal_window_kernels(KernelRegistry& registry);
void register_random_kernels(KernelRegistry& registry);
void register_control_unreachable_kernels(KernelRegistry& registry);

const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_nn_conv_kernels(r);
    register_nn_dense_kernels(r);
    register_nn_pool_kernels(r);
    register_nn_norm_kernels(r);
    register_nn_softmax_kernels(r);
    register_nn_activation_kernels(r);
    register_nn_bias_add_kernels(r);
    register_nn_pad_kernels(r);
    register_nn_loss_kernels(r);
    register_nn_instance_norm_kernels(r);
    register_nn_lrn_kernels(r);
    register_tensor_unary_kernels(r);
    register_tensor_binary_kernels(r);
    register_tensor_where_kernels(r);
    register_tensor_reduce_kernels(r);
    register_tensor_init_kernels(r);
    register_tensor_cumsum_kernels(r);
    register_tensor_topk_kernels(r);
    register_tensor_einsum_kernels(r);
    register_tensor_det_kernels(r);
    register_transform_reshape_kernels(r);
    register_transform_transpose_kernels(r);
    register_transform_concat_kernels(r);
    register_transform_slice_kernels(r);
    register_transform_gather_scatter_kernels(r);
    register_transform_one_hot_kernels(r);
    register_transform_unique_kernels(r);
    register_transform_tfidf_vectorizer_kernels(r);
    register_image_resize_kernels(r);
    register_image_grid_sample_kernels(r);
    register_vision_roi_align_kernels(r);
    register_vision_nms_kernels(r);
    register_annotation_device_kernels(r);
    register_qnn_quantize_kernels(r);
    register_qnn_conv2d_kernels(r);
    register_qnn_matmul_kernels(r);
    register_signal_dft_kernels(r);
    register_signal_window_kernels(r);
    register_random_kernels(r);
    register_control_unreachable_kernels(r);
    return r;
  }();
  return registry;
}

void KernelRegistry::add(const std::string& name, KernelFn fn) {
  check(!kernels_.count(name), "reference kernel '", name, "' registered twice");
  kernels_[name] = std::move(fn);
}

const KernelFn* KernelRegistry::find(const std::string& name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : &it->second;
}

const KernelFn& KernelRegistry::get(const std::string& name) const {
  const KernelFn* fn = find(name);
  if (!fn) throw Error("no reference kernel").op(name);
  return *fn;
}

}  // namespace kiln
