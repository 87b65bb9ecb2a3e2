// conv2d's candidate walk (tensor/cuda/conv_algo_choice.h) driven without a GPU:
// made-up cuDNN statuses (cudnn_graph.h's values) and allocator errors decide
// which candidates are tried, which are passed over, when the walk stops, and
// what the error says when none runs. tests/cuda/test_cuda_dnn.cpp runs the real one.
#include <catch2/catch.hpp>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <ddl/tensor/cuda/conv_algo_choice.h>

using namespace ddl;
using cuda::detail::ConvTry;
using cuda::detail::first_that_runs;

namespace {

struct FakeAlgo {
  int algo = 0;
  int tries = 0;  // set by attempt, to see that the returned candidate is the one attempt updated
};

constexpr int kRan = 0, kBadParam = 2000, kNotSupportedShape = 3002, kExecutionFailedCudart = 5003,
              kSublibraryLoadingFailed = 1008;

// Outcome per algorithm: a status, or -1 for an allocator out-of-memory throw, -2 for another ddl::Error.
struct Walk {
  std::map<int, int> outcome;
  std::vector<int> tried;
  std::vector<int> failures_seen;  // statuses given to after_failure
  bool sticky = false;             // after_failure throws, as for a sticky CUDA error

  FakeAlgo run(const std::vector<int>& algos) {
    std::vector<FakeAlgo> all;
    for (int a : algos) all.push_back({a, 0});
    const auto attempt = [&](FakeAlgo& a) -> ConvTry {
      tried.push_back(a.algo);
      a.tries += 1;
      const int o = outcome.at(a.algo);
      if (o == -1) throw Error("cuda:0: out of memory: tried to allocate 1.00 GiB");
      if (o == -2) throw Error("CUDA: cudaMalloc failed: an illegal memory access was encountered (700)");
      return {o, "cudnnConvolutionForward"};
    };
    const auto after_failure = [&](int status, const char*) -> std::string {
      failures_seen.push_back(status);
      if (sticky) throw Error("CUDA: cudaStreamQuery failed: an illegal memory access was encountered (700)");
      return status == kExecutionFailedCudart ? " (CUDA: invalid configuration argument (9))" : "";
    };
    const auto status_name = [](int st) { return st == kBadParam ? "CUDNN_STATUS_BAD_PARAM" : "SOME_STATUS"; };
    return first_that_runs(all, "conv2d: float32 input [1, 1, 4, 4]", attempt, after_failure, status_name);
  }
};

std::string error_of(Walk& w, const std::vector<int>& algos) {
  try {
    w.run(algos);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("conv algorithm walk: the first candidate that runs is chosen, in order", "[conv][cudnn]") {
  Walk w;
  w.outcome = {{7, kNotSupportedShape}, {1, -1}, {4, kExecutionFailedCudart}, {0, kBadParam}, {2, kRan}, {5, kRan}};
  const FakeAlgo got = w.run({7, 1, 4, 0, 2, 5});
  REQUIRE(got.algo == 2);
  REQUIRE(got.tries == 1);  // the copy attempt updated is the one returned
  REQUIRE(w.tried == std::vector<int>{7, 1, 4, 0, 2});
  // An out-of-memory candidate is passed over without a CUDA check; every failed status gets one.
  REQUIRE(w.failures_seen == std::vector<int>{kNotSupportedShape, kExecutionFailedCudart, kBadParam});
}

TEST_CASE("conv algorithm walk: a library-wide status stops at once", "[conv][cudnn]") {
  Walk w;
  w.outcome = {{3, kNotSupportedShape}, {1, kSublibraryLoadingFailed}, {2, kRan}};
  const std::string msg = error_of(w, {3, 1, 2});
  REQUIRE(w.tried == std::vector<int>{3, 1});
  REQUIRE(msg ==
          "conv2d: float32 input [1, 1, 4, 4], algorithm 1: cuDNN: cudnnConvolutionForward failed: "
          "SOME_STATUS (1008)");
  Walk host_alloc;  // CUDNN_STATUS_ALLOC_FAILED, a host allocation
  host_alloc.outcome = {{1, 4003}, {2, kRan}};
  error_of(host_alloc, {1, 2});
  REQUIRE(host_alloc.tried == std::vector<int>{1});
}

TEST_CASE("conv algorithm walk: none runs, the first non-algorithm status leads the message", "[conv][cudnn]") {
  Walk w;
  w.outcome = {{6, kNotSupportedShape}, {1, -1}, {0, kBadParam}, {4, kExecutionFailedCudart}};
  const std::string msg = error_of(w, {6, 1, 0, 4});
  REQUIRE(w.tried == std::vector<int>{6, 1, 0, 4});
  REQUIRE(msg ==
          "conv2d: float32 input [1, 1, 4, 4]: none of cuDNN's 4 usable algorithms ran"
          "; first error not specific to an algorithm: algorithm 0: cudnnConvolutionForward failed: "
          "CUDNN_STATUS_BAD_PARAM (2000)"
          "; algorithm 6: cudnnConvolutionForward failed: SOME_STATUS (3002)"
          "; algorithm 1: cuda:0: out of memory: tried to allocate 1.00 GiB"
          "; algorithm 0: cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM (2000)"
          "; algorithm 4: cudnnConvolutionForward failed: SOME_STATUS (5003) (CUDA: invalid configuration argument "
          "(9))");
  Walk empty;
  REQUIRE(error_of(empty, {}) == "conv2d: float32 input [1, 1, 4, 4]: none of cuDNN's 0 usable algorithms ran");
}

TEST_CASE("conv algorithm walk: a sticky CUDA error or another exception ends the walk", "[conv][cudnn]") {
  Walk sticky;  // every later candidate would fail alike (EXECUTION_FAILED_CUDART): raise the CUDA error
  sticky.sticky = true;
  sticky.outcome = {{1, kExecutionFailedCudart}, {2, kRan}};
  REQUIRE(error_of(sticky, {1, 2}) == "CUDA: cudaStreamQuery failed: an illegal memory access was encountered (700)");
  REQUIRE(sticky.tried == std::vector<int>{1});
  Walk other;  // a ddl::Error other than out-of-memory propagates unchanged
  other.outcome = {{1, -2}, {2, kRan}};
  REQUIRE(error_of(other, {1, 2}) == "CUDA: cudaMalloc failed: an illegal memory access was encountered (700)");
  REQUIRE(other.tried == std::vector<int>{1});
}
