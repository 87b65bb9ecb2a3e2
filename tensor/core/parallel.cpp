// OpenMP-backed thread control. Without OpenMP everything runs on one thread.
#include <algorithm>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/trace/thread_name.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ddl {

void set_num_threads(int n) {
  DDL_CHECK(n >= 1, "set_num_threads: expected n >= 1, got ", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}

int get_num_threads() {
#ifdef _OPENMP
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

namespace detail {

void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
#ifdef _OPENMP
  const int64_t n = end - begin;
  const int64_t max_chunks = (n + grain - 1) / std::max<int64_t>(grain, 1);
  const int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  // An exception may not cross an OpenMP region: keep the first and rethrow.
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // OpenMP's pool threads show as "compute" in ps -L and top -H; the calling thread keeps
    // its own name (the main thread's is the program's).
    thread_local bool named = false;
    if (t != 0 && !named) {
      trace::set_os_thread_name("compute");
      named = true;
    }
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = begin + t * chunk, e = std::min(end, b + chunk);
    if (b < e) {
      try {
        fn(b, e);
      } catch (...) {
#pragma omp critical(ddl_parallel_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
#else
  fn(begin, end);
#endif
}

}  // namespace detail
}  // namespace ddl
