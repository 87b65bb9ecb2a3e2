// cat/stack allocate the result and copy each input into its slice of it with
// copy_ (so they run wherever the copy kernel does); split/chunk are narrow().
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/join.h>

namespace ddl {

namespace {

std::string shapes_of(const std::vector<Tensor>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + describe(ts[i]);
  return s;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  DDL_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  for (const Tensor& t : tensors) DDL_CHECK(t.defined(), "cat: undefined tensor in the list");
  // torch.cat skips 1-D empty tensors (legacy behaviour kept for compatibility).
  std::vector<Tensor> parts;
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) {
    dtype = promote_types(dtype, t.dtype());
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(t);
  }
  if (parts.empty()) return empty({0}, TensorOptions(dtype, tensors[0].device()));
  const Tensor& first = parts[0];
  DDL_CHECK(first.dim() > 0, "cat: zero-dimensional tensors cannot be concatenated, got ", shapes_of(tensors));
  const int64_t d = wrap_dim(dim, first.dim(), "cat");
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  for (const Tensor& t : parts) {
    DDL_CHECK(t.device() == first.device(), "cat: tensors on different devices: ", shapes_of(tensors));
    bool same = t.dim() == first.dim();
    for (int64_t i = 0; same && i < t.dim(); ++i) same = i == d || t.size(i) == first.size(i);
    DDL_CHECK(same, "cat: tensors must have the same shape except in dimension ", d, ", got ", shapes_of(tensors));
    out_shape[d] += t.size(d);
  }
  Tensor out = empty(out_shape, TensorOptions(dtype, first.device()));
  int64_t at = 0;
  for (const Tensor& t : parts) {
    if (t.size(d) > 0) out.narrow(d, at, t.size(d)).copy_(t);
    at += t.size(d);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  DDL_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  for (const Tensor& t : tensors) DDL_CHECK(t.defined(), "stack: undefined tensor in the list");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    DDL_CHECK(t.shape() == tensors[0].shape(), "stack: expected tensors of equal shape, got ", shapes_of(tensors));
    parts.push_back(t.unsqueeze(d));
  }
  return cat(parts, d);
}

Tensor cat(std::initializer_list<Tensor> tensors, int64_t dim) { return cat(std::vector<Tensor>(tensors), dim); }
Tensor stack(std::initializer_list<Tensor> tensors, int64_t dim) { return stack(std::vector<Tensor>(tensors), dim); }

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  DDL_CHECK(t.dim() > 0, "split: expected a tensor with at least one dim, got ", describe(t));
  const int64_t d = wrap_dim(dim, t.dim(), "split");
  const int64_t n = t.size(d);
  DDL_CHECK(split_size > 0 || (split_size == 0 && n == 0), "split: split_size must be positive, got ", split_size,
            " for dimension ", d, " of size ", n);
  if (n == 0) return {t};
  std::vector<Tensor> out;
  for (int64_t at = 0; at < n; at += split_size) out.push_back(t.narrow(d, at, std::min(split_size, n - at)));
  return out;
}

namespace {
// split with a list of sizes, and split_with_sizes, under the name `op` the user called.
std::vector<Tensor> split_sizes_as(const Tensor& t, const std::vector<int64_t>& split_sizes, int64_t dim,
                                   const char* op) {
  DDL_CHECK(t.dim() > 0, op, ": expected a tensor with at least one dim, got ", describe(t));
  const int64_t d = wrap_dim(dim, t.dim(), op);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    DDL_CHECK(s >= 0, op, ": negative size ", s, " in split_sizes");
    total += s;
  }
  DDL_CHECK(total == t.size(d), op, ": split_sizes add up to ", total, " but dimension ", d, " of ", describe(t),
            " has size ", t.size(d));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : split_sizes) {
    out.push_back(t.narrow(d, at, s));
    at += s;
  }
  return out;
}

}  // namespace

std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& split_sizes, int64_t dim) {
  return split_sizes_as(t, split_sizes, dim, "split_with_sizes");
}

std::vector<Tensor> split(const Tensor& t, const std::vector<int64_t>& split_sizes, int64_t dim) {
  return split_sizes_as(t, split_sizes, dim, "split");
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  DDL_CHECK(chunks > 0, "chunk: number of chunks must be positive, got ", chunks);
  DDL_CHECK(t.dim() > 0, "chunk: expected a tensor with at least one dim, got ", describe(t));
  const int64_t d = wrap_dim(dim, t.dim(), "chunk");
  const int64_t n = t.size(d);
  // An empty dim gives `chunks` empty views, as torch.chunk does.
  if (n == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), t);
  return split(t, n / chunks + (n % chunks != 0), d);  // ceil(n / chunks) without n + chunks overflowing
}

}  // namespace ddl
