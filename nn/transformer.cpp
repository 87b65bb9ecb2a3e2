// TransformerEncoderLayer / TransformerEncoder: construction with PyTorch's names,
// and the post-norm and pre-norm residual forms of torch.nn.TransformerEncoderLayer.
#include <ddl/nn/forward_hooks.h>
#include <ddl/nn/transformer.h>

namespace ddl::nn {

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& opts)
    : Cloneable("TransformerEncoderLayer"), opts_(opts) {
  DDL_CHECK(opts_.activation() == "relu" || opts_.activation() == "gelu",
            "TransformerEncoderLayer: activation must be 'relu' or 'gelu', got '", opts_.activation(), "'");
  DDL_CHECK(opts_.dim_feedforward() > 0, "TransformerEncoderLayer: dim_feedforward must be positive, got ",
            opts_.dim_feedforward());
  reset();
}

void TransformerEncoderLayer::reset() {
  // PyTorch's registration order, so named_parameters() lists the same names in the same order.
  self_attn = register_module(
      "self_attn",
      std::make_shared<MultiheadAttention>(opts_.d_model(), opts_.nhead(), opts_.dropout(), true, opts_.batch_first()));
  linear1 = register_module("linear1", std::make_shared<Linear>(opts_.d_model(), opts_.dim_feedforward()));
  dropout = register_module("dropout", std::make_shared<Dropout>(opts_.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(opts_.dim_feedforward(), opts_.d_model()));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(Shape{opts_.d_model()}, opts_.layer_norm_eps()));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(Shape{opts_.d_model()}, opts_.layer_norm_eps()));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(opts_.dropout()));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(opts_.dropout()));
}

Variable TransformerEncoderLayer::self_attention_block(const Variable& x, const AttentionMasks& masks) {
  // need_weights=false, as PyTorch's _sa_block.
  return call_child(*dropout1, "dropout1", self_attn->forward(x, x, x, masks, false).output);
}

Variable TransformerEncoderLayer::feed_forward_block(const Variable& x) {
  Variable h = call_child(*linear1, "linear1", x);
  h = opts_.activation() == "gelu" ? gelu(h) : relu(h);
  h = call_child(*dropout, "dropout", h);
  return call_child(*dropout2, "dropout2", call_child(*linear2, "linear2", h));
}

Variable TransformerEncoderLayer::forward(const Variable& src, const AttentionMasks& masks) {
  Variable x = src;
  if (opts_.norm_first()) {
    x = add(x, self_attention_block(call_child(*norm1, "norm1", x), masks));
    return add(x, feed_forward_block(call_child(*norm2, "norm2", x)));
  }
  x = call_child(*norm1, "norm1", add(x, self_attention_block(x, masks)));
  return call_child(*norm2, "norm2", add(x, feed_forward_block(x)));
}

static const TransformerEncoderLayer& encoder_layer_of(const TransformerEncoderOptions& o) {
  DDL_CHECK(o.encoder_layer() != nullptr, "TransformerEncoder: encoder_layer is empty");
  return *o.encoder_layer();
}

TransformerEncoder::TransformerEncoder(const TransformerEncoderOptions& o)
    : TransformerEncoder(encoder_layer_of(o), o.num_layers(), o.norm()) {}

TransformerEncoder::TransformerEncoder(const TransformerEncoderLayer& layer, int64_t num_layers,
                                       std::shared_ptr<LayerNorm> final_norm)
    : Module("TransformerEncoder") {
  DDL_CHECK(num_layers > 0, "TransformerEncoder: num_layers must be positive, got ", num_layers);
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(layer.clone());
  if (final_norm) norm = register_module("norm", std::move(final_norm));
}

Variable TransformerEncoder::forward(const Variable& src, const AttentionMasks& masks) {
  Variable x = src;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto layer = layers->at<TransformerEncoderLayer>(i);
    x = run_forward_hooked(*layer, [&] { return layer->forward(x, masks); });
  }
  return norm ? call_child(*norm, "norm", x) : x;
}

std::shared_ptr<Module> TransformerEncoder::clone() const {
  // Same structure from the first layer, then every value and flag from this one.
  auto copy = std::make_shared<TransformerEncoder>(
      *layers->at<TransformerEncoderLayer>(0), static_cast<int64_t>(layers->size()), norm ? nn::clone(*norm) : nullptr);
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace ddl::nn
