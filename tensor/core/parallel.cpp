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

#ifdef _OPENMP
namespace {
// OpenMP's pool threads show as "compute" in ps -L and top -H; the calling thread keeps
// its own name (the main thread's is the program's).
void name_pool_thread() {
  thread_local bool named = false;
  if (omp_get_thread_num() != 0 && !named) {
    trace::set_os_thread_name("compute");
    named = true;
  }
}

// fn(b, e), keeping the first exception in error: one may not cross an OpenMP region, so
// the caller rethrows it after the region.
void run_keeping_error(const std::function<void(int64_t, int64_t)>& fn, int64_t b, int64_t e,
                       std::exception_ptr& error) {
  try {
    fn(b, e);
  } catch (...) {
#pragma omp critical(ddl_parallel_error)
    if (!error) error = std::current_exception();
  }
}
}  // namespace
#endif

void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
#ifdef _OPENMP
  const int64_t n = end - begin;
  const int64_t max_chunks = (n + grain - 1) / std::max<int64_t>(grain, 1);
  const int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    name_pool_thread();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = begin + t * chunk, e = std::min(end, b + chunk);
    if (b < e) run_keeping_error(fn, b, e, error);
  }
  if (error) std::rethrow_exception(error);
#else
  fn(begin, end);
#endif
}

void parallel_for_dynamic_impl(int64_t begin, int64_t end, int64_t chunk,
                               const std::function<void(int64_t, int64_t)>& fn) {
#ifdef _OPENMP
  const int64_t c = std::max<int64_t>(chunk, 1), chunks = (end - begin + c - 1) / c;
  const int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), chunks));
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    name_pool_thread();
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < chunks; ++i)
      run_keeping_error(fn, begin + i * c, std::min(end, begin + (i + 1) * c), error);
  }
  if (error) std::rethrow_exception(error);
#else
  fn(begin, end);
#endif
}

}  // namespace detail
}  // namespace ddl
