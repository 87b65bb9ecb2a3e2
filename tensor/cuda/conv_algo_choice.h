// The candidate walk of conv2d's algorithm choice (tensor/cuda/conv2d.cpp): which
// cuDNN statuses pass over a candidate, which end the walk, and the message when
// none runs. Plain C++ (no CUDA headers), so a CPU unit test can drive it with
// made-up statuses; the cuDNN and CUDA calls come in as callables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ddl/base/error.h>

namespace ddl::cuda::detail {

// cuDNN 9 statuses are category * 1000 + detail (cudnn_graph.h). Library-wide:
// the 1xxx family (not initialized, sublibrary version mismatch or loading
// failed, license error, ...) and CUDNN_STATUS_ALLOC_FAILED (4003, a host
// allocation), which every candidate would hit alike.
inline bool is_library_failure(int status) { return status / 1000 == 1 || status == 4003; }

// A failure of this algorithm on this shape: not supported (3xxx), an internal
// error (4xxx), a failed execution (5xxx) or BAD_PARAM_SIZE_INSUFFICIENT (2006).
inline bool is_algorithm_failure(int status) {
  const int category = status / 1000;
  return category == 3 || category == 4 || category == 5 || status == 2006;
}

// The caching allocator reports running out of memory as a ddl::Error with this
// text (tensor/core/caching_allocator.cpp, CachingAllocator::new_segment); it has no
// type of its own.
inline bool is_out_of_memory(const ddl::Error& e) {
  return std::string_view(e.what()).find(": out of memory: ") != std::string_view::npos;
}

// One candidate's outcome: status 0 when it ran, else the cuDNN status and the call that returned it.
struct ConvTry {
  int status = 0;
  const char* call = "";
};

// Tries `all` in order and returns the first candidate that runs, as PyTorch's
// AlgoIterator::try_all (aten/src/ATen/native/cudnn/Conv_v7.cpp). Algo has an
// int member `algo`. attempt(Algo&) -> ConvTry runs the pass (and may update
// the candidate, e.g. its workspace size); an out-of-memory ddl::Error passes
// over the candidate, any other exception propagates. after_failure(status,
// call) -> std::string runs after each failed status, before it is judged: it
// throws for an error no candidate can get past (a sticky CUDA error) and
// otherwise returns a note for the message ("" for none). status_name(int)
// gives a status's text. A library-wide status ends the walk at once; any
// other moves on. With none left, throws naming `what`, the first status that
// was not an algorithm's failure (likely the real cause) and every failure.
template <typename Algo, typename Attempt, typename AfterFailure, typename StatusName>
Algo first_that_runs(const std::vector<Algo>& all, const std::string& what, const Attempt& attempt,
                     const AfterFailure& after_failure, const StatusName& status_name) {
  using ::ddl::detail::str_cat;
  std::string passed_over, first_other;
  for (Algo a : all) {
    ConvTry t;
    try {
      t = attempt(a);
    } catch (const ddl::Error& e) {
      if (!is_out_of_memory(e)) throw;
      passed_over += str_cat("; algorithm ", a.algo, ": ", e.what());
      continue;
    }
    if (t.status == 0) return a;
    const std::string note = after_failure(t.status, t.call);
    const std::string failure = str_cat(t.call, " failed: ", status_name(t.status), " (", t.status, ")", note);
    if (is_library_failure(t.status))
      ::ddl::detail::throw_error(__FILE__, __LINE__, str_cat(what, ", algorithm ", a.algo, ": cuDNN: ", failure));
    if (!is_algorithm_failure(t.status) && first_other.empty())
      first_other = str_cat("; first error not specific to an algorithm: algorithm ", a.algo, ": ", failure);
    passed_over += str_cat("; algorithm ", a.algo, ": ", failure);
  }
  ::ddl::detail::throw_error(
      __FILE__, __LINE__,
      str_cat(what, ": none of cuDNN's ", all.size(), " usable algorithms ran", first_other, passed_over));
}

}  // namespace ddl::cuda::detail
