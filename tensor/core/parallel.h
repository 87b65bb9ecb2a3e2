// Thread control for every CPU kernel and GEMM (OpenMP underneath).
// parallel_for splits [begin, end) into chunks of at least `grain` items; work
// must be independent per index, so results never depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace ddl {

// Sets the threads used by GEMM, elementwise and reduction loops. n >= 1.
void set_num_threads(int n);
int get_num_threads();

namespace detail {
// The grain for items of `item_elems` elements each: enough items that a chunk holds about
// `chunk_elems` elements, at least one.
inline int64_t grain_for(int64_t chunk_elems, int64_t item_elems) {
  return std::max<int64_t>(1, chunk_elems / std::max<int64_t>(item_elems, 1));
}
void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
void parallel_for_dynamic_impl(int64_t begin, int64_t end, int64_t chunk,
                               const std::function<void(int64_t, int64_t)>& fn);
}  // namespace detail

template <typename Fn>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const Fn& fn) {
  if (end <= begin) return;
  if (end - begin <= grain || get_num_threads() == 1) {
    fn(begin, end);
    return;
  }
  detail::parallel_for_impl(begin, end, grain, fn);
}

// As parallel_for, but [begin, end) is cut into chunks of `chunk` items that threads take
// in turn as they finish one, for work whose cost per item varies (data in or out of
// cache): a static split left one thread waiting for the other at the end. One thread
// (or a range of at most `chunk`) takes the range whole.
template <typename Fn>
void parallel_for_dynamic(int64_t begin, int64_t end, int64_t chunk, const Fn& fn) {
  if (end <= begin) return;
  if (end - begin <= chunk || get_num_threads() == 1) {
    fn(begin, end);
    return;
  }
  detail::parallel_for_dynamic_impl(begin, end, chunk, fn);
}

}  // namespace ddl
