// MultiheadAttention: projections, the masked scaled dot-product per head, and the
// output projection, following torch.nn.functional.multi_head_attention_forward
// (PyTorch 1.13) step for step, including scaling q before the product and
// applying dropout to the returned weights.
#include <cmath>
#include <limits>
#include <sstream>

#include <ddl/nn/attention.h>
#include <ddl/nn/init.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl::nn {

namespace {
const MultiheadAttentionOptions& supported(const MultiheadAttentionOptions& o) {
  DDL_CHECK(!o.add_bias_kv() && !o.add_zero_attn(),
            "MultiheadAttention: add_bias_kv and add_zero_attn are not supported");
  DDL_CHECK(o.kdim() == o.embed_dim() && o.vdim() == o.embed_dim(), "MultiheadAttention: kdim=", o.kdim(),
            " and vdim=", o.vdim(), " must equal embed_dim=", o.embed_dim(),
            " (separate key/value sizes are not supported)");
  return o;
}
}  // namespace

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& o)
    : MultiheadAttention(supported(o).embed_dim(), o.num_heads(), o.dropout(), o.bias(), o.batch_first()) {}

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout, bool bias,
                                       bool batch_first)
    : Cloneable("MultiheadAttention"),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      dropout_(dropout),
      bias_(bias),
      batch_first_(batch_first) {
  DDL_CHECK(embed_dim > 0 && num_heads > 0 && embed_dim % num_heads == 0, "MultiheadAttention: embed_dim=", embed_dim,
            " must be divisible by num_heads=", num_heads);
  DDL_CHECK(dropout >= 0 && dropout <= 1, "MultiheadAttention: dropout must be in [0, 1], got ", dropout);
  reset();
}

void MultiheadAttention::reset() {
  // As MultiheadAttention._reset_parameters: xavier-uniform projections, zero biases.
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed_dim_, embed_dim_}));
  init::xavier_uniform_(in_proj_weight.data());
  in_proj_bias = bias_ ? register_parameter("in_proj_bias", zeros({3 * embed_dim_})) : Variable();
  out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim_, embed_dim_, bias_));
  if (bias_) out_proj->bias.data().zero_();
}

namespace {

Tensor masked_to_additive(const Tensor& mask, DType dtype) {
  if (is_floating(mask.dtype())) return mask.to(dtype);
  DDL_CHECK(mask.dtype() == DType::Bool, "MultiheadAttention: masks must be bool or float, got ", describe(mask));
  const TensorOptions opts(dtype, mask.device());
  return where(mask, scalar_tensor(-std::numeric_limits<double>::infinity(), opts), scalar_tensor(0.0, opts));
}

// The additive mask for scores [N * heads, L, S]: attn_mask and key_padding_mask
// merged, or undefined when neither is given.
Tensor merged_mask(const AttentionMasks& m, int64_t n, int64_t heads, int64_t l, int64_t s, DType dtype) {
  Tensor out;
  if (m.attn_mask.defined()) {
    const Tensor& a = m.attn_mask;
    DDL_CHECK((a.dim() == 2 && a.shape() == Shape({l, s})) || (a.dim() == 3 && a.shape() == Shape({n * heads, l, s})),
              "MultiheadAttention: attn_mask must be [", l, ", ", s, "] or [", n * heads, ", ", l, ", ", s, "], got ",
              a.shape());
    out = masked_to_additive(a.dim() == 2 ? a.unsqueeze(0) : a, dtype);
  }
  if (m.key_padding_mask.defined()) {
    DDL_CHECK(m.key_padding_mask.shape() == Shape({n, s}), "MultiheadAttention: key_padding_mask must be [", n, ", ", s,
              "], got ", m.key_padding_mask.shape());
    // [N, S] -> [N * heads, 1, S]
    const Tensor kpm = masked_to_additive(m.key_padding_mask, dtype)
                           .reshape({n, 1, 1, s})
                           .expand({n, heads, 1, s})
                           .reshape({n * heads, 1, s});
    out = out.defined() ? add(out, kpm) : kpm;
  }
  return out;
}

// [T, N, E] -> [N * heads, T, head_dim]
Variable split_heads(const Variable& x, int64_t heads) {
  const int64_t t = x.size(0), n = x.size(1), hd = x.size(2) / heads;
  return x.reshape({t, n * heads, hd}).transpose(0, 1);
}

}  // namespace

AttentionOutput MultiheadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                            const AttentionMasks& masks, bool need_weights, bool average_attn_weights) {
  const int64_t e = embed_dim_, heads = num_heads_;
  DDL_CHECK(query.defined() && key.defined() && value.defined(), "MultiheadAttention: undefined input");
  const bool unbatched = query.dim() == 2;
  DDL_CHECK((query.dim() == 3 || unbatched) && key.dim() == query.dim() && value.dim() == query.dim(),
            "MultiheadAttention: query, key and value must all be 3-D (or all 2-D unbatched), got ", query.shape(),
            ", ", key.shape(), ", ", value.shape());
  DDL_CHECK(query.size(-1) == e && key.size(-1) == e && value.size(-1) == e, "MultiheadAttention: expected ", e,
            " features, got ", query.shape(), ", ", key.shape(), ", ", value.shape());
  // Bring everything to [T, N, E].
  auto time_major = [&](const Variable& v) {
    if (unbatched) return v.unsqueeze(1);
    return batch_first_ ? v.transpose(0, 1) : v;
  };
  const Variable q_in = time_major(query), k_in = time_major(key), v_in = time_major(value);
  const int64_t l = q_in.size(0), n = q_in.size(1), s = k_in.size(0), hd = e / heads;
  DDL_CHECK(k_in.size(1) == n && v_in.size(1) == n && v_in.size(0) == s, "MultiheadAttention: key ", key.shape(),
            " and value ", value.shape(), " must match each other and the query's batch");
  AttentionMasks m = masks;
  if (unbatched && m.key_padding_mask.defined()) m.key_padding_mask = m.key_padding_mask.unsqueeze(0);

  // Input projections: three products with slices of the packed weight, also when query,
  // key and value are one tensor. One product and three narrows of its output cost more in
  // backward: each narrow's gradient is a zero-filled tensor of the whole output, and the
  // three are summed; a weight slice's gradient is only the size of the weight.
  auto part = [&](const Variable& w, int64_t i) { return w.defined() ? w.narrow(0, i * e, e) : Variable(); };
  const Variable q = linear(q_in, part(in_proj_weight, 0), part(in_proj_bias, 0));
  const Variable k = linear(k_in, part(in_proj_weight, 1), part(in_proj_bias, 1));
  const Variable v = linear(v_in, part(in_proj_weight, 2), part(in_proj_bias, 2));
  // scores: [N * heads, L, S]
  const Variable qh = div(split_heads(q, heads), std::sqrt(static_cast<double>(hd)));
  Variable scores = matmul(qh, split_heads(k, heads).transpose(1, 2));
  const Tensor mask = merged_mask(m, n, heads, l, s, scores.dtype());
  if (mask.defined()) scores = add(scores, Variable(mask));
  Variable attn = softmax(scores, -1);
  if (dropout_ > 0 && is_training()) attn = dropout(attn, dropout_, true, default_generator());
  // [N * heads, L, hd] -> [L, N, E] -> out_proj
  const Variable ctx = matmul(attn, split_heads(v, heads)).transpose(0, 1).reshape({l, n, e});
  AttentionOutput out;
  out.output = call_child(*out_proj, "out_proj", ctx);
  if (unbatched)
    out.output = out.output.squeeze(1);
  else if (batch_first_)
    out.output = out.output.transpose(0, 1);
  if (need_weights) {
    Variable w = attn.reshape({n, heads, l, s});
    if (average_attn_weights) w = mean(w, {1});
    out.weights = unbatched ? w.squeeze(0) : w;
  }
  return out;
}

std::string MultiheadAttention::extra_repr() const {
  std::ostringstream os;
  os << "embed_dim=" << embed_dim_ << ", num_heads=" << num_heads_;
  if (dropout_ != 0) os << ", dropout=" << dropout_;
  if (!bias_) os << ", bias=False";
  if (batch_first_) os << ", batch_first=True";
  return os.str();
}

Tensor causal_mask(int64_t size, Device device) {
  DDL_CHECK(size > 0, "causal_mask: size must be positive, got ", size);
  const Tensor idx = arange(size, {DType::Int64, device});
  return gt(idx.unsqueeze(0), idx.unsqueeze(1));  // [i, j] = j > i
}

}  // namespace ddl::nn
