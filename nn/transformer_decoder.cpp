// TransformerDecoderLayer, TransformerDecoder, Transformer: construction with PyTorch's names and
// the post-norm and pre-norm residual forms of torch.nn.TransformerDecoderLayer.
#include <limits>

#include <ddl/nn/init.h>
#include <ddl/nn/transformer_decoder.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerDecoderLayerOptions& opts)
    : Cloneable("TransformerDecoderLayer"), opts_(opts) {
  DDL_CHECK(opts_.activation() == "relu" || opts_.activation() == "gelu",
            "TransformerDecoderLayer: activation must be 'relu' or 'gelu', got '", opts_.activation(), "'");
  DDL_CHECK(opts_.dim_feedforward() > 0, "TransformerDecoderLayer: dim_feedforward must be positive, got ",
            opts_.dim_feedforward());
  reset();
}

void TransformerDecoderLayer::reset() {
  // PyTorch's registration order, so named_parameters() lists the same names in the same order.
  const int64_t d = opts_.d_model(), h = opts_.nhead();
  const double p = opts_.dropout();
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(d, h, p, true, opts_.batch_first()));
  multihead_attn =
      register_module("multihead_attn", std::make_shared<MultiheadAttention>(d, h, p, true, opts_.batch_first()));
  linear1 = register_module("linear1", std::make_shared<Linear>(d, opts_.dim_feedforward()));
  dropout = register_module("dropout", std::make_shared<Dropout>(p));
  linear2 = register_module("linear2", std::make_shared<Linear>(opts_.dim_feedforward(), d));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{d}, opts_.layer_norm_eps()));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{d}, opts_.layer_norm_eps()));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(Shape{d}, opts_.layer_norm_eps()));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(p));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(p));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(p));
}

Variable TransformerDecoderLayer::self_attention_block(const Variable& x, const TransformerDecoderMasks& masks) {
  // need_weights=false, as PyTorch's _sa_block.
  const AttentionMasks m{masks.tgt_mask, masks.tgt_key_padding_mask};
  return call_child(*dropout1, "dropout1", self_attn->forward(x, x, x, m, false).output);
}

Variable TransformerDecoderLayer::cross_attention_block(const Variable& x, const Variable& memory,
                                                        const TransformerDecoderMasks& masks) {
  const AttentionMasks m{masks.memory_mask, masks.memory_key_padding_mask};
  return call_child(*dropout2, "dropout2", multihead_attn->forward(x, memory, memory, m, false).output);
}

Variable TransformerDecoderLayer::feed_forward_block(const Variable& x) {
  Variable h = call_child(*linear1, "linear1", x);
  h = opts_.activation() == "gelu" ? gelu(h) : relu(h);
  h = call_child(*dropout, "dropout", h);
  return call_child(*dropout3, "dropout3", call_child(*linear2, "linear2", h));
}

Variable TransformerDecoderLayer::forward(const Variable& tgt, const Variable& memory,
                                          const TransformerDecoderMasks& masks) {
  DDL_CHECK(tgt.defined() && memory.defined(), "TransformerDecoderLayer: undefined tgt or memory");
  Variable x = tgt;
  if (opts_.norm_first()) {
    x = add(x, self_attention_block(call_child(*norm1, "norm1", x), masks));
    x = add(x, cross_attention_block(call_child(*norm2, "norm2", x), memory, masks));
    return add(x, feed_forward_block(call_child(*norm3, "norm3", x)));
  }
  x = call_child(*norm1, "norm1", add(x, self_attention_block(x, masks)));
  x = call_child(*norm2, "norm2", add(x, cross_attention_block(x, memory, masks)));
  return call_child(*norm3, "norm3", add(x, feed_forward_block(x)));
}

TransformerDecoder::TransformerDecoder(const TransformerDecoderLayer& layer, int64_t num_layers,
                                       std::shared_ptr<LayerNorm> final_norm)
    : Module("TransformerDecoder") {
  DDL_CHECK(num_layers > 0, "TransformerDecoder: num_layers must be positive, got ", num_layers);
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(layer.clone());
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

Variable TransformerDecoder::forward(const Variable& tgt, const Variable& memory,
                                     const TransformerDecoderMasks& masks) {
  Variable x = tgt;
  for (size_t i = 0; i < layers->size(); ++i) x = layers->at<TransformerDecoderLayer>(i)->forward(x, memory, masks);
  return norm ? call_child(*norm, "norm", x) : x;
}

std::shared_ptr<Module> TransformerDecoder::clone() const {
  // Same structure from the first layer, then every value and flag from this one.
  auto copy = std::make_shared<TransformerDecoder>(
      *layers->at<TransformerDecoderLayer>(0), static_cast<int64_t>(layers->size()), norm ? nn::clone(*norm) : nullptr);
  copy->copy_state_from(*this);
  return copy;
}

namespace {

// The one place that spells TransformerEncoderLayer's options (nn/transformer.h).
TransformerEncoderLayer encoder_layer(const TransformerOptions& o) {
  return TransformerEncoderLayer(TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                                     .dim_feedforward(o.dim_feedforward())
                                     .dropout(o.dropout())
                                     .activation(o.activation())
                                     .layer_norm_eps(o.layer_norm_eps())
                                     .batch_first(o.batch_first())
                                     .norm_first(o.norm_first()));
}

TransformerDecoderLayer decoder_layer(const TransformerOptions& o) {
  return TransformerDecoderLayer(TransformerDecoderLayerOptions(o.d_model(), o.nhead())
                                     .dim_feedforward(o.dim_feedforward())
                                     .dropout(o.dropout())
                                     .activation(o.activation())
                                     .layer_norm_eps(o.layer_norm_eps())
                                     .batch_first(o.batch_first())
                                     .norm_first(o.norm_first()));
}

}  // namespace

Transformer::Transformer(const TransformerOptions& opts) : Module("Transformer"), opts_(opts) {
  DDL_CHECK(opts_.num_encoder_layers() > 0 && opts_.num_decoder_layers() > 0,
            "Transformer: num_encoder_layers and num_decoder_layers must be positive, got ", opts_.num_encoder_layers(),
            " and ", opts_.num_decoder_layers());
  const Shape d{opts_.d_model()};
  encoder = register_module(
      "encoder", std::make_shared<TransformerEncoder>(encoder_layer(opts_), opts_.num_encoder_layers(),
                                                      std::make_shared<LayerNorm>(d, opts_.layer_norm_eps())));
  decoder = register_module(
      "decoder", std::make_shared<TransformerDecoder>(decoder_layer(opts_), opts_.num_decoder_layers(),
                                                      std::make_shared<LayerNorm>(d, opts_.layer_norm_eps())));
  reset_parameters();
}

void Transformer::reset_parameters() {
  for (auto& [name, p] : named_parameters())
    if (p.dim() > 1) init::xavier_uniform_(p.data());
}

Variable Transformer::forward(const Variable& src, const Variable& tgt, const TransformerMasks& masks) {
  DDL_CHECK(src.defined() && tgt.defined(), "Transformer: undefined src or tgt");
  const bool batched = src.dim() == 3;
  const int64_t bdim = opts_.batch_first() ? 0 : 1;
  DDL_CHECK(!batched || (tgt.dim() == 3 && src.size(bdim) == tgt.size(bdim)),
            "Transformer: the batch number of src and tgt must be equal, got ", src.shape(), " and ", tgt.shape());
  DDL_CHECK(src.size(-1) == opts_.d_model() && tgt.size(-1) == opts_.d_model(),
            "Transformer: the feature number of src and tgt must be equal to d_model (", opts_.d_model(), "), got ",
            src.shape(), " and ", tgt.shape());
  const Variable memory = encoder->forward(src, AttentionMasks{masks.src_mask, masks.src_key_padding_mask});
  return decoder->forward(tgt, memory,
                          TransformerDecoderMasks{masks.tgt_mask, masks.memory_mask, masks.tgt_key_padding_mask,
                                                  masks.memory_key_padding_mask});
}

std::shared_ptr<Module> Transformer::clone() const {
  auto copy = std::make_shared<Transformer>(opts_);
  copy->copy_state_from(*this);
  return copy;
}

Tensor Transformer::generate_square_subsequent_mask(int64_t sz, TensorOptions opts) {
  DDL_CHECK(sz >= 0, "generate_square_subsequent_mask: sz must be non-negative, got ", sz);
  const Tensor idx = arange(sz, TensorOptions(DType::Int64, opts.device()));
  return masked_fill(zeros({sz, sz}, opts), gt(idx.unsqueeze(0), idx.unsqueeze(1)),
                     -std::numeric_limits<double>::infinity());
}

}  // namespace ddl::nn
