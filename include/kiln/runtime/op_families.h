// The op families. Each family NAME has its definitions (relations, patterns, computes) in
// src/op/<dir>/<file>.cc, registered by register_NAME_ops(OpRegistry&), and its reference
// kernels in src/runtime/kernels/<dir>/<file>.cc, registered by
// register_NAME_kernels(KernelRegistry&). This one list drives both registrations
// (KILN_OP_FAMILIES(F) expands F(NAME) per family), so a family is added in one place. It
// lives in the runtime layer because the kernel registry, which must not depend on the
// compiler, expands it too. Registration is explicit (no static initialisers) so that linking
// kiln statically cannot silently drop an op.
#pragma once

// clang-format off
#define KILN_OP_FAMILIES(F) \
  F(nn_conv) \
  F(nn_dense) \
  F(nn_pool) \
  F(nn_norm) \
  F(nn_softmax) \
  F(nn_attention) \
  F(nn_recurrent) \
  F(nn_winograd) \
  F(nn_pointwise_depthwise) \
  F(nn_activation) \
  F(nn_bias_add) \
  F(nn_pad) \
  F(nn_loss) \
  F(nn_instance_norm) \
  F(nn_lrn) \
  F(nn_mish_gelu) \
  F(nn_group_norm) \
  F(nn_col2im) \
  F(tensor_unary) \
  F(tensor_binary) \
  F(tensor_where) \
  F(tensor_reduce) \
  F(tensor_init) \
  F(tensor_cumsum) \
  F(tensor_topk) \
  F(tensor_einsum) \
  F(tensor_det) \
  F(tensor_bitwise) \
  F(transform_reshape) \
  F(transform_transpose) \
  F(transform_layout) \
  F(transform_concat) \
  F(transform_slice) \
  F(transform_gather_scatter) \
  F(transform_one_hot) \
  F(transform_unique) \
  F(transform_tfidf_vectorizer) \
  F(image_resize) \
  F(image_grid_sample) \
  F(vision_roi_align) \
  F(vision_nms) \
  F(annotation_device) \
  F(qnn_quantize) \
  F(qnn_conv2d) \
  F(qnn_matmul) \
  F(signal_dft) \
  F(signal_window) \
  F(random) \
  F(control_unreachable) \
  F(dyn) \
  F(dyn_shape)
// clang-format on
