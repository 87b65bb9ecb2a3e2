// lstm_layer and gru_layer: forward and backward through time on tensors.
//
// Note [Fused recurrent layers]
// Built from per-step Variable ops, a layer would select step t out of the
// precomputed input projection [T, B, G] and stack the T outputs. A selected
// view's backward (autograd/ops/view.cpp) returns a gradient of the whole
// [T, B, G] input, zeros except for step t, so T steps cost O(T^2 * B * G) in
// zero-filling and accumulation: quadratic in sequence length. One node per layer
// avoids that: the forward runs the recurrence on tensors and saves the gate
// activations; the backward walks the steps in reverse (backpropagation through
// time) and ends with three large products (dW_ih, dW_hh, dx) over all steps at
// once. Only the tensor ops of tensor/ are used, so any device works.
#include <initializer_list>
#include <utility>

#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/rnn.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cpu/lstm_cell.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace {

Tensor data_or_empty(const Variable& v) { return v.defined() ? v.data() : Tensor(); }

// See Note [Autocast]: the recurrent layers are GEMMs (cuDNN's RNN under CUDA autocast, and the
// *_cell ops), so any float32 input sends every input, states included, to the low dtype.
bool any_needs_low(std::initializer_list<const Variable*> vs) {
  for (const Variable* v : vs)
    if (autocast::needs_low(*v)) return true;
  return false;
}

// A defined operand must have the input's dtype and device (as torch.nn.LSTM requires).
void check_like_input(const char* op, const char* name, const Variable& v, const Variable& x) {
  DDL_CHECK(!v.defined() || (v.dtype() == x.dtype() && v.device() == x.device()), op, ": ", name, " is ",
            describe(v.data()), " but the input is ", describe(x.data()), " (dtypes and devices must match)");
}

// Checks shapes shared by both cells; `gates` is 4 (LSTM) or 3 (GRU).
void check_layer(const char* op, int64_t gates, const Variable& x, const Variable& h0, const Variable& w_ih,
                 const Variable& w_hh, const Variable& b_ih, const Variable& b_hh) {
  DDL_CHECK(x.defined() && x.dim() == 3, op, ": expected input [T, B, I], got ", x.defined() ? x.shape() : Shape{});
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a float input, got ", x.dtype());
  DDL_CHECK(w_hh.defined() && w_hh.dim() == 2 && w_hh.size(0) == gates * w_hh.size(1), op, ": weight_hh must be [",
            gates, "H, H], got ", w_hh.shape());
  const int64_t h = w_hh.size(1);
  DDL_CHECK(w_ih.defined() && w_ih.shape() == Shape({gates * h, x.size(2)}), op, ": weight_ih ", w_ih.shape(),
            " does not fit input ", x.shape(), " and hidden size ", h);
  for (const Variable* b : {&b_ih, &b_hh})
    DDL_CHECK(!b->defined() || b->shape() == Shape{gates * h}, op, ": biases must be [", gates * h, "], got ",
              b->shape());
  DDL_CHECK(!h0.defined() || h0.shape() == Shape({x.size(1), h}), op, ": initial state must be [", x.size(1), ", ", h,
            "], got ", h0.shape());
  const std::pair<const char*, const Variable*> operands[] = {
      {"weight_ih", &w_ih}, {"weight_hh", &w_hh}, {"bias_ih", &b_ih}, {"bias_hh", &b_hh}, {"h0", &h0}};
  for (const auto& [name, v] : operands) check_like_input(op, name, *v, x);
}

// hprev[t] = the state step t started from: h0 for the first processed step, else
// the neighbouring output in processing order. out: [T, B, H].
Tensor previous_states(const Tensor& out, const Tensor& h0, bool reverse) {
  const int64_t steps = out.size(0);
  Tensor hprev = empty(out.shape(), {out.dtype(), out.device()});
  if (reverse) {
    if (steps > 1) hprev.narrow(0, 0, steps - 1).copy_(out.narrow(0, 1, steps - 1));
    hprev.select(0, steps - 1).copy_(h0);
  } else {
    if (steps > 1) hprev.narrow(0, 1, steps - 1).copy_(out.narrow(0, 0, steps - 1));
    hprev.select(0, 0).copy_(h0);
  }
  return hprev;
}

// The gradients common to both layers, from the pre-activation gradients of all
// steps: d_xw [T, B, G] (input side, includes b_ih) and d_hw (hidden side, b_hh).
std::vector<Tensor> weight_grads(const Tensor& d_xw, const Tensor& d_hw, const Tensor& x, const Tensor& hprev,
                                 const Tensor& w_ih, const std::vector<bool>& needs, Tensor dh0, Tensor dc0) {
  const int64_t g = d_xw.size(2);
  const Tensor dxw2 = d_xw.reshape({-1, g}), dhw2 = d_hw.reshape({-1, g});
  std::vector<Tensor> out(7);
  if (needs[0]) out[0] = matmul(dxw2, w_ih).reshape(x.shape());
  if (needs[1]) out[1] = std::move(dh0);
  if (needs[2]) out[2] = std::move(dc0);
  if (needs[3]) out[3] = matmul(dxw2.t(), x.reshape({-1, x.size(2)}));
  if (needs[4]) out[4] = matmul(dhw2.t(), hprev.reshape({-1, hprev.size(2)}));
  if (needs[5]) out[5] = sum(dxw2, {0});
  if (needs[6]) out[6] = sum(dhw2, {0});
  return out;
}

}  // namespace

LstmLayerResult lstm_layer(const Variable& x, const Variable& h0, const Variable& c0, const Variable& w_ih,
                           const Variable& w_hh, const Variable& b_ih, const Variable& b_hh, bool reverse) {
  using autocast::to_low;
  if (any_needs_low({&x, &h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh}))
    return lstm_layer(to_low(x), to_low(h0), to_low(c0), to_low(w_ih), to_low(w_hh), to_low(b_ih), to_low(b_hh),
                      reverse);
  check_layer("lstm_layer", 4, x, h0, w_ih, w_hh, b_ih, b_hh);
  DDL_CHECK(!c0.defined() || c0.shape() == Shape({x.size(1), w_hh.size(1)}), "lstm_layer: c0 must be [", x.size(1),
            ", ", w_hh.size(1), "], got ", c0.shape());
  check_like_input("lstm_layer", "c0", c0, x);
  const Tensor xd = x.data(), wih = w_ih.data(), whh = w_hh.data(), bhh = data_or_empty(b_hh);
  const int64_t steps = x.size(0), batch = x.size(1), hs = w_hh.size(1);
  const TensorOptions opts(xd.dtype(), xd.device());
  DDL_CHECK(steps > 0, "lstm_layer: the sequence is empty");
  const Tensor h_init = h0.defined() ? h0.data() : zeros({batch, hs}, opts);
  const Tensor c_init = c0.defined() ? c0.data() : zeros({batch, hs}, opts);

  // acts: [T, B, 4H] = i, f, g, o after their nonlinearities; cs: [T, B, H] cell
  // states; packed: [T + 1, B, H] = the outputs h_t, then c_n (one node, one result).
  const Tensor xw = linear(xd, wih, data_or_empty(b_ih));
  const Tensor acts = empty({steps, batch, 4 * hs}, opts), cs = empty({steps, batch, hs}, opts);
  const Tensor packed = empty({steps + 1, batch, hs}, opts);
  const Tensor out = packed.narrow(0, 0, steps);
  // float32 on the CPU: each step's elementwise work in one fused pass (tensor/cpu/lstm_cell.h).
  const bool fused = xd.device().is_cpu() && xd.dtype() == DType::Float32;
  Tensor h = h_init, c = fused ? c_init.contiguous() : c_init;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    const Tensor gates = add(xw.select(0, t), linear(h, whh, bhh));
    const Tensor a = acts.select(0, t);
    if (fused) {
      const Tensor gc = gates.contiguous(), c_t = cs.select(0, t), h_t = out.select(0, t);
      cpu::lstm_cell_forward_f32(gc.data<float>(), c.data<float>(), a.data<float>(), c_t.data<float>(),
                                 h_t.data<float>(), batch, hs);
      c = c_t;
      h = h_t;
      continue;
    }
    a.narrow(1, 0, 2 * hs).copy_(sigmoid(gates.narrow(1, 0, 2 * hs)));
    a.narrow(1, 2 * hs, hs).copy_(tanh(gates.narrow(1, 2 * hs, hs)));
    a.narrow(1, 3 * hs, hs).copy_(sigmoid(gates.narrow(1, 3 * hs, hs)));
    c = add(mul(a.narrow(1, hs, hs), c), mul(a.narrow(1, 0, hs), a.narrow(1, 2 * hs, hs)));
    cs.select(0, t).copy_(c);
    h = mul(a.narrow(1, 3 * hs, hs), tanh(c));
    out.select(0, t).copy_(h);
  }
  packed.select(0, steps).copy_(c);

  Variable result = autograd::make_result(
      packed, "LstmLayerBackward", {&x, &h0, &c0, &w_ih, &w_hh, &b_ih, &b_hh},
      [xd, wih, whh, h_init, c_init, acts, cs, out, reverse, steps, hs, fused](const Tensor& g,
                                                                               const std::vector<bool>& needs) {
        const Tensor dy = g.narrow(0, 0, steps);
        const Tensor d_gates = empty(acts.shape(), {acts.dtype(), acts.device()});
        Tensor dh = zeros(h_init.shape(), {g.dtype(), g.device()});
        // The fused step updates dc in place: never g's own storage.
        Tensor dc = fused ? g.select(0, steps).clone().contiguous() : g.select(0, steps).contiguous();
        const Tensor c_first = fused ? c_init.contiguous() : c_init;
        for (int64_t s = steps - 1; s >= 0; --s) {
          const int64_t t = reverse ? steps - 1 - s : s;
          const int64_t prev = reverse ? t + 1 : t - 1;
          if (fused && g.dtype() == DType::Float32) {
            dh = add(dh, dy.select(0, t)).contiguous();
            const Tensor c_prev = s > 0 ? cs.select(0, prev) : c_first, da = d_gates.select(0, t);
            cpu::lstm_cell_backward_f32(acts.select(0, t).data<float>(), cs.select(0, t).data<float>(),
                                        c_prev.data<float>(), dh.data<float>(), dc.data<float>(), da.data<float>(),
                                        acts.size(1), hs);
            dh = matmul(da, whh);
            continue;
          }
          const Tensor a = acts.select(0, t);
          const Tensor i = a.narrow(1, 0, hs), f = a.narrow(1, hs, hs), gg = a.narrow(1, 2 * hs, hs),
                       o = a.narrow(1, 3 * hs, hs);
          const Tensor c_prev = s > 0 ? cs.select(0, prev) : c_init;
          const Tensor tc = tanh(cs.select(0, t));
          dh = add(dh, dy.select(0, t));
          // h = o * tanh(c): into c through tanh, and into o.
          dc = add(dc, tanh_backward(mul(dh, o), tc));
          const Tensor da = d_gates.select(0, t);
          da.narrow(1, 0, hs).copy_(sigmoid_backward(mul(dc, gg), i));
          da.narrow(1, hs, hs).copy_(sigmoid_backward(mul(dc, c_prev), f));
          da.narrow(1, 2 * hs, hs).copy_(tanh_backward(mul(dc, i), gg));
          da.narrow(1, 3 * hs, hs).copy_(sigmoid_backward(mul(dh, tc), o));
          dc = mul(dc, f);
          dh = matmul(da, whh);
        }
        return weight_grads(d_gates, d_gates, xd, previous_states(out, h_init, reverse), wih, needs, dh, dc);
      });
  LstmLayerResult r;
  r.output = result.narrow(0, 0, steps);
  r.h_n = r.output.select(0, reverse ? 0 : steps - 1);
  r.c_n = result.select(0, steps);
  return r;
}

GruLayerResult gru_layer(const Variable& x, const Variable& h0, const Variable& w_ih, const Variable& w_hh,
                         const Variable& b_ih, const Variable& b_hh, bool reverse) {
  using autocast::to_low;
  if (any_needs_low({&x, &h0, &w_ih, &w_hh, &b_ih, &b_hh}))
    return gru_layer(to_low(x), to_low(h0), to_low(w_ih), to_low(w_hh), to_low(b_ih), to_low(b_hh), reverse);
  check_layer("gru_layer", 3, x, h0, w_ih, w_hh, b_ih, b_hh);
  const Tensor xd = x.data(), wih = w_ih.data(), whh = w_hh.data(), bhh = data_or_empty(b_hh);
  const int64_t steps = x.size(0), batch = x.size(1), hs = w_hh.size(1);
  const TensorOptions opts(xd.dtype(), xd.device());
  DDL_CHECK(steps > 0, "gru_layer: the sequence is empty");
  const Tensor h_init = h0.defined() ? h0.data() : zeros({batch, hs}, opts);

  // acts: [T, B, 3H] = r, z, n; hwn: [T, B, H] = W_hn h + b_hn (r scales it, so the backward needs it).
  const Tensor xw = linear(xd, wih, data_or_empty(b_ih));
  const Tensor acts = empty({steps, batch, 3 * hs}, opts), hwn = empty({steps, batch, hs}, opts);
  const Tensor out = empty({steps, batch, hs}, opts);
  Tensor h = h_init;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    const Tensor xt = xw.select(0, t), hw = linear(h, whh, bhh), a = acts.select(0, t);
    a.narrow(1, 0, 2 * hs).copy_(sigmoid(add(xt.narrow(1, 0, 2 * hs), hw.narrow(1, 0, 2 * hs))));
    const Tensor n = tanh(add(xt.narrow(1, 2 * hs, hs), mul(a.narrow(1, 0, hs), hw.narrow(1, 2 * hs, hs))));
    a.narrow(1, 2 * hs, hs).copy_(n);
    hwn.select(0, t).copy_(hw.narrow(1, 2 * hs, hs));
    h = add(n, mul(a.narrow(1, hs, hs), sub(h, n)));  // (1 - z) n + z h
    out.select(0, t).copy_(h);
  }

  const Variable none;
  Variable result = autograd::make_result(
      out, "GruLayerBackward", {&x, &h0, &none, &w_ih, &w_hh, &b_ih, &b_hh},
      [xd, wih, whh, h_init, acts, hwn, out, reverse, steps, hs](const Tensor& dy, const std::vector<bool>& needs) {
        const Tensor d_xw = empty(acts.shape(), {acts.dtype(), acts.device()});
        const Tensor d_hw = empty(acts.shape(), {acts.dtype(), acts.device()});
        Tensor dh = zeros(h_init.shape(), {dy.dtype(), dy.device()});
        for (int64_t s = steps - 1; s >= 0; --s) {
          const int64_t t = reverse ? steps - 1 - s : s;
          const Tensor a = acts.select(0, t);
          const Tensor r = a.narrow(1, 0, hs), z = a.narrow(1, hs, hs), n = a.narrow(1, 2 * hs, hs);
          const Tensor h_prev = s > 0 ? out.select(0, reverse ? t + 1 : t - 1) : h_init;
          dh = add(dh, dy.select(0, t));
          const Tensor dan = tanh_backward(mul(dh, rsub(z, 1.0)), n);
          const Tensor daz = sigmoid_backward(mul(dh, sub(h_prev, n)), z);
          const Tensor dar = sigmoid_backward(mul(dan, hwn.select(0, t)), r);
          const Tensor dx_t = d_xw.select(0, t), dh_t = d_hw.select(0, t);
          dx_t.narrow(1, 0, hs).copy_(dar);
          dx_t.narrow(1, hs, hs).copy_(daz);
          dx_t.narrow(1, 2 * hs, hs).copy_(dan);
          dh_t.narrow(1, 0, 2 * hs).copy_(dx_t.narrow(1, 0, 2 * hs));
          dh_t.narrow(1, 2 * hs, hs).copy_(mul(dan, r));
          dh = add(mul(dh, z), matmul(dh_t, whh));
        }
        return weight_grads(d_xw, d_hw, xd, previous_states(out, h_init, reverse), wih, needs, dh, Tensor());
      });
  GruLayerResult r;
  r.output = result;
  r.h_n = result.select(0, reverse ? 0 : steps - 1);
  return r;
}

}  // namespace ddl
