// ddl::nn::functional: the layers' operations as plain functions, like torch.nn.functional.
#pragma once

#include <ddl/autograd/functions.h>

namespace ddl::nn::functional {

using ddl::adaptive_avg_pool2d;
using ddl::adaptive_max_pool2d;
using ddl::avg_pool2d;
using ddl::batch_norm;
using ddl::binary_cross_entropy;
using ddl::binary_cross_entropy_with_logits;
using ddl::conv1d;
using ddl::conv2d;
using ddl::conv_transpose2d;
using ddl::cross_entropy;
using ddl::dropout;
using ddl::huber_loss;
using ddl::interpolate;
using ddl::kl_div;
using ddl::l1_loss;
using ddl::linear;
using ddl::log_softmax;
using ddl::max_pool2d;
using ddl::mse_loss;
using ddl::nll_loss;
using ddl::relu;
using ddl::sigmoid;
using ddl::smooth_l1_loss;
using ddl::softmax;
using ddl::tanh;

// Sequence-model layers' functions (nn/normalization.h, embedding.h, activation.h).
using ddl::embedding;
using ddl::gelu;
using ddl::group_norm;
using ddl::layer_norm;
using ddl::leaky_relu;
using ddl::silu;

// More activations (autograd/ops/activation_more.h).
using ddl::celu;
using ddl::elu;
using ddl::glu;
using ddl::hardshrink;
using ddl::hardsigmoid;
using ddl::hardswish;
using ddl::hardtanh;
using ddl::logsigmoid;
using ddl::mish;
using ddl::pixel_shuffle;
using ddl::pixel_unshuffle;
using ddl::prelu;
using ddl::relu6;
using ddl::rrelu;
using ddl::selu;
using ddl::softmin;
using ddl::softshrink;
using ddl::softsign;
using ddl::tanhshrink;
using ddl::threshold;

inline Variable flatten(const Variable& x, int64_t start_dim = 1, int64_t end_dim = -1) {
  return x.flatten(start_dim, end_dim);
}

// Margin, embedding and likelihood losses (autograd/ops/margin_loss.h).
using ddl::cosine_embedding_loss;
using ddl::ctc_loss;
using ddl::gaussian_nll_loss;
using ddl::hinge_embedding_loss;
using ddl::margin_ranking_loss;
using ddl::multi_margin_loss;
using ddl::multilabel_margin_loss;
using ddl::multilabel_soft_margin_loss;
using ddl::poisson_nll_loss;
using ddl::soft_margin_loss;
using ddl::triplet_margin_loss;

}  // namespace ddl::nn::functional
