// PowerSGD (Vogels, Karimireddy and Jaggi, "PowerSGD: Practical Low-Rank Gradient
// Compression for Distributed Optimization", NeurIPS 2019) as a DDP comm hook, following
// PyTorch's powerSGD_hook: each gradient viewed as an n x m matrix M is sent as rank-r
// factors P (n x r) and Q (m x r) from one step of power iteration, with error feedback
// (what compression lost is added to the next step's gradient) and warm start (Q is kept
// from the previous step). Tensors not worth compressing (1-D ones always) are all-reduced
// as they are. Not here: PyTorch's batch_tensors_with_same_shape and QR for rank > 2 (ddl
// orthogonalises by Gram-Schmidt at every rank; QR gives the same P Q^T up to rounding).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>

#include <ddl/dist/hooks/comm_hook.h>

namespace ddl::dist::hooks {

// PyTorch's PowerSGDState arguments and defaults.
struct PowerSGDOptions {
  int64_t matrix_approximation_rank = 1;
  int64_t start_powerSGD_iter = 1000;  // plain all-reduce before (error feedback needs a warm-up)
  double min_compression_rate = 2;     // compress M when n·m > (n + m)·r · this
  bool use_error_feedback = true;
  bool warm_start = true;
  double orthogonalization_epsilon = 0;  // added to column norms; 0: a zero column stays zero
  uint64_t random_seed = 0;
};

// The state a PowerSGD hook keeps between steps; public so tests and reports can read it.
struct PowerSGDState {
  explicit PowerSGDState(PowerSGDOptions o = {}) : opts(o), rng(o.random_seed) {}
  PowerSGDOptions opts;
  int64_t iter = 0;  // steps seen: counted when the last bucket of a backward passes
  // Per bucket index: this rank's accumulated compression error (buffer-sized), and the
  // P and Q factors of its compressed tensors, concatenated in bucket order.
  std::map<size_t, Tensor> error_dict, p_memory_dict, q_memory_dict;
  // Fresh Qs: Generator(rng() % 1'000'000'000), then randn({m, r}) per compressed tensor in
  // bucket order, each orthogonalised; the same seed gives the same Qs on every rank.
  std::mt19937_64 rng;
  int64_t total_numel_before_compression = 0, total_numel_after_compression = 0;
};

// A hook sharing `state` (one state per DDP model). Requires float32 or float64 buckets.
CommHook powersgd_hook(std::shared_ptr<PowerSGDState> state);

// Orthogonalises the columns of a contiguous [rows, cols] matrix in place by Gram-Schmidt,
// as PyTorch's _orthogonalize_gram_schmidt (each column divided by its norm + epsilon).
void orthogonalize(const Tensor& matrix, double epsilon = 0);

}  // namespace ddl::dist::hooks
