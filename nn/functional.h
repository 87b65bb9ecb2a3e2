// ddl::nn::functional: the layers' operations as plain functions, like torch.nn.functional.
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/autograd/ops/bilinear.h>
#include <ddl/autograd/ops/dropout_more.h>
#include <ddl/autograd/ops/fold.h>
#include <ddl/autograd/ops/norm_more.h>

namespace ddl::nn::functional {

using ddl::adaptive_avg_pool2d;
using ddl::adaptive_max_pool2d;
using ddl::avg_pool2d;
using ddl::binary_cross_entropy;
using ddl::binary_cross_entropy_with_logits;
using ddl::conv1d;
using ddl::conv2d;
using ddl::conv_transpose2d;
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

// Variable parameters only, so plain Tensors convert to Variables and the call behaves as
// torch.nn.functional's: the Tensor overloads in tensor/ return a BatchNormResult and
// accept only class-index targets.
inline Variable batch_norm(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                           Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5) {
  return ddl::batch_norm(x, weight, bias, std::move(running_mean), std::move(running_var), training, momentum, eps);
}
inline Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& opts = {}) {
  return ddl::cross_entropy(logits, target, opts);
}
inline Variable cross_entropy(const Variable& logits, const Tensor& target, const Tensor& weight,
                              const CrossEntropyOptions& opts = {}) {
  return ddl::cross_entropy(logits, target, weight, opts);
}

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

// N-d convolution and pooling (autograd/ops/conv_nd.h, pool_nd.h).
using ddl::adaptive_avg_pool1d;
using ddl::adaptive_avg_pool3d;
using ddl::adaptive_max_pool1d;
using ddl::adaptive_max_pool1d_with_indices;
using ddl::adaptive_max_pool2d_with_indices;
using ddl::adaptive_max_pool3d;
using ddl::adaptive_max_pool3d_with_indices;
using ddl::avg_pool1d;
using ddl::avg_pool3d;
using ddl::conv3d;
using ddl::conv_transpose1d;
using ddl::conv_transpose3d;
using ddl::lp_pool1d;
using ddl::lp_pool2d;
using ddl::max_pool1d;
using ddl::max_pool1d_with_indices;
using ddl::max_pool2d_with_indices;
using ddl::max_pool3d;
using ddl::max_pool3d_with_indices;
using ddl::max_unpool1d;
using ddl::max_unpool2d;
using ddl::max_unpool3d;

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

// Normalisation, dropout, padding, fold and bag layers' functions (autograd/ops/norm_more.h,
// dropout_more.h, fold.h, bilinear.h; pad is autograd/ops/shape_ops.h's).
using ddl::alpha_dropout;
using ddl::bilinear;
using ddl::dropout1d;
using ddl::dropout2d;
using ddl::dropout3d;
using ddl::embedding_bag;
using ddl::feature_alpha_dropout;
using ddl::fold;
using ddl::instance_norm;
using ddl::local_response_norm;
using ddl::pad;
using ddl::unfold;

}  // namespace ddl::nn::functional
