// matmul and linear: shape checks, batch broadcasting, and reading transposed
// views in place (a [K, M] view with strides [1, K] is passed as trans_a).
#include <algorithm>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/checked_shape.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/kernels/functors.h>
#include <ddl/tensor/kernels/gemm_kernel.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/linalg.h>

namespace ddl {
namespace kernels {
DDL_DEFINE_KERNEL(gemm_kernel, GemmFnPtr);
}

namespace {

// A matrix operand: base pointer, whether it is stored transposed, leading dim, and the
// stride between the matrices of its batch.
struct MatrixView {
  Tensor holder;  // keeps a contiguous copy alive when one was needed
  bool trans;
  int64_t ld;
  int64_t batch_stride;
};

// Last two dims of `t` (already broadcast-free in those dims) as a GEMM operand. Any layout
// a strided-batched GEMM can read is passed as it is: rows or columns at unit stride, and the
// batch dims one uniformly strided block (a head-split [B·H, T, d] view of a [T, B·H, d]
// tensor, or its transpose, as attention makes), so such operands are not copied first.
MatrixView as_matrix(const Tensor& t) {
  const int64_t r = t.size(-2), c = t.size(-1);
  const int64_t sr = t.stride(-2), sc = t.stride(-1);
  int64_t bstride = r * c;
  bool batch_ok = true;
  {
    int64_t expected = -1;  // the stride the next non-trivial batch dim must have
    for (int64_t i = t.dim() - 3; i >= 0 && batch_ok; --i) {
      if (t.size(i) == 1) continue;
      if (expected < 0) bstride = t.stride(i);
      batch_ok = t.stride(i) >= 0 && (expected < 0 || t.stride(i) == expected);
      expected = t.stride(i) * t.size(i);
    }
  }
  if (batch_ok && (sc == 1 || c == 1) && sr >= std::max<int64_t>(c, 1))
    return {t, false, std::max<int64_t>(sr, 1), bstride};
  if (batch_ok && (sr == 1 || r == 1) && sc >= std::max<int64_t>(r, 1))
    return {t, true, std::max<int64_t>(sc, 1), bstride};
  Tensor c_ = t.contiguous();
  return {c_, false, std::max<int64_t>(c, 1), r * c};
}

}  // namespace

namespace {

// Integer products: torch.matmul computes them for uint8, int32 and int64 in the
// operands' dtype, wrapping on overflow (uint8: 200 * 1 + 100 * 1 + 7 * 1 = 51).
// No BLAS has integer GEMM, so a plain loop, in unsigned arithmetic (wrap-around
// is defined there and gives the two's-complement bits). CPU only, as PyTorch
// ("addmm_cuda" is not implemented for Long).
// a: [nbatch, M, K], b: [nbatch, K, N] contiguous; out: [nbatch, M, N] contiguous.
template <typename T>
void integer_gemm_typed(const T* ap, const T* bp, T* op, int64_t nbatch, int64_t M, int64_t K, int64_t N) {
  using U = WrapU<T>;
  std::vector<U> row(static_cast<size_t>(N));
  for (int64_t p = 0; p < nbatch; ++p)
    for (int64_t i = 0; i < M; ++i) {
      std::fill(row.begin(), row.end(), U(0));
      for (int64_t k = 0; k < K; ++k) {
        const U av = static_cast<U>(ap[(p * M + i) * K + k]);
        const T* brow = bp + (p * K + k) * N;
        for (int64_t j = 0; j < N; ++j) row[j] = static_cast<U>(row[j] + av * static_cast<U>(brow[j]));
      }
      for (int64_t j = 0; j < N; ++j) op[(p * M + i) * N + j] = static_cast<T>(row[j]);
    }
}

void integer_gemm(const Tensor& a, const Tensor& b, const Tensor& out, int64_t nbatch, int64_t M, int64_t K,
                  int64_t N) {
  switch (a.dtype()) {
    case DType::UInt8:
      return integer_gemm_typed(a.data<uint8_t>(), b.data<uint8_t>(), out.data<uint8_t>(), nbatch, M, K, N);
    case DType::Int8:
      return integer_gemm_typed(a.data<int8_t>(), b.data<int8_t>(), out.data<int8_t>(), nbatch, M, K, N);
    case DType::Int16:
      return integer_gemm_typed(a.data<int16_t>(), b.data<int16_t>(), out.data<int16_t>(), nbatch, M, K, N);
    case DType::Int32:
      return integer_gemm_typed(a.data<int32_t>(), b.data<int32_t>(), out.data<int32_t>(), nbatch, M, K, N);
    case DType::Int64:
      return integer_gemm_typed(a.data<int64_t>(), b.data<int64_t>(), out.data<int64_t>(), nbatch, M, K, N);
    default:
      DDL_ASSERT(false, "integer_gemm: not an integer dtype: ", a.dtype());
  }
}

// a @ b, plus `init` (broadcast to the result, e.g. a bias) added inside the
// GEMM (beta = 1) when defined: one rounding for 16-bit outputs, as addmm.
// `op` names the op the user called (matmul or linear) in errors.
Tensor matmul_add(const Tensor& a_in, const Tensor& b_in, const Tensor& init, const char* op) {
  DDL_CHECK(a_in.defined() && b_in.defined(), op, ": undefined operand");
  DDL_CHECK(a_in.dim() >= 1 && b_in.dim() >= 1, op, ": operands must have at least 1 dim, got ", a_in.shape(), " and ",
            b_in.shape());
  DDL_CHECK(a_in.device() == b_in.device(), op, ": operands on different devices (", describe(a_in), " and ",
            describe(b_in), ")");
  DDL_CHECK(a_in.dtype() == b_in.dtype() && (is_floating(a_in.dtype()) || is_integral(a_in.dtype())), op,
            ": expected two float or two integer tensors of one dtype (bool has no product), got ", describe(a_in),
            " and ", describe(b_in));
  const bool integral = is_integral(a_in.dtype());
  DDL_CHECK(!integral || a_in.device().is_cpu(), op, ": integer products run on the CPU only, got ", describe(a_in),
            " and ", describe(b_in));
  // 1-D operands become matrices and the added dim is dropped from the result.
  const Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  DDL_CHECK(b.size(-2) == K, op, ": cannot multiply ", a_in.shape(), " by ", b_in.shape());

  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, op);
  Shape a_full = batch, b_full = batch, out_shape = batch;
  a_full.push_back(M), a_full.push_back(K);
  b_full.push_back(K), b_full.push_back(N);
  out_shape.push_back(M), out_shape.push_back(N);
  const int64_t nbatch = checked_numel(batch, op);
  checked_numel(a_full, op);  // the broadcast operands are views of these shapes
  checked_numel(b_full, op);

  Tensor out = detail::empty(op, out_shape, TensorOptions(a.dtype(), a.device()));
  if (init.defined()) out.copy_(init);
  if (integral) {
    DDL_ASSERT(!init.defined(), "integer products take no init (linear adds their bias itself)");
    integer_gemm(a.expand(a_full).contiguous(), b.expand(b_full).contiguous(), out, nbatch, M, K, N);
  } else if (out.numel() > 0) {
    // A broadcast operand (stride 0 over the batch) is passed with batch stride 0 when it is a plain matrix.
    const bool a_shared = a_batch.numel() == 1 && nbatch > 1;
    const bool b_shared = b_batch.numel() == 1 && nbatch > 1;
    const MatrixView av = as_matrix(a_shared ? a.reshape({M, K}) : a.expand(a_full).reshape(a_full));
    const MatrixView bv = as_matrix(b_shared ? b.reshape({K, N}) : b.expand(b_full).reshape(b_full));
    if (K == 0) {
      if (!init.defined()) out.zero_();
    } else {
      kernels::GemmArgs g{a.dtype(),
                          av.trans,
                          bv.trans,
                          M,
                          N,
                          K,
                          1.0,
                          av.holder.raw_data(),
                          av.ld,
                          a_shared ? 0 : av.batch_stride,
                          bv.holder.raw_data(),
                          bv.ld,
                          b_shared ? 0 : bv.batch_stride,
                          init.defined() ? 1.0 : 0.0,
                          out.raw_data(),
                          N,
                          M * N,
                          nbatch,
                          a.device().index};
      // A batch of row-major matrices stacked at a stride of M rows times one shared B is a
      // single taller product (as torch.matmul folds [..., M, K] @ [K, N]): B is packed once.
      if (b_shared && !av.trans && av.batch_stride == M * av.ld) {
        g.M = M * nbatch;
        g.batch = 1;
      }
      kernels::gemm_kernel(a.device())(g);
    }
  }
  if (a_in.dim() == 1) out = out.squeeze(-2);
  if (b_in.dim() == 1) out = out.squeeze(-1);
  return out;
}
}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) { return matmul_add(a_in, b_in, Tensor(), "matmul"); }

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  DDL_CHECK(x.defined() && weight.defined(), "linear: undefined input or weight");
  DDL_CHECK(weight.dim() == 2, "linear: weight must be [out_features, in_features], got ", weight.shape());
  DDL_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear: input ", x.shape(), " does not match weight ",
            weight.shape(), " (expected last dim ", weight.size(1), ")");
  if (bias.defined())
    DDL_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "linear: bias ", bias.shape(),
              " does not match weight ", weight.shape());
  // 16-bit: the bias joins the float32 accumulation and the sum is rounded once, as addmm (Note [Half compute]).
  if (bias.defined() && is_reduced_float(x.dtype()) && bias.dtype() == x.dtype() && bias.device() == x.device())
    return matmul_add(x, weight.t(), bias, "linear");
  Tensor y = matmul_add(x, weight.t(), Tensor(), "linear");
  if (bias.defined()) y.add_(bias);
  return y;
}

}  // namespace ddl
