// ddl::tensor from nested initializer lists (tensor/core/literal.h): one walk checks that the
// lists are rectangular and of one element type and collects the values in row-major order.
#include <string>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/literal.h>

namespace ddl {

namespace {

using detail::TensorData;

const char* kind_name(TensorData::Kind k) {
  switch (k) {
    case TensorData::Kind::Bool:
      return "bool";
    case TensorData::Kind::Byte:
      return "uint8";
    case TensorData::Kind::Integer:
      return "integer";
    case TensorData::Kind::Floating:
      return "floating";
  }
  return "?";
}

// Shape of the list from its first elements at each depth (LibTorch infers it the same way).
Shape infer_shape(const TensorData& d) {
  Shape s;
  const TensorData* p = &d;
  while (p->is_list()) {
    s.push_back(static_cast<int64_t>(p->children().size()));
    if (p->children().empty()) break;
    p = &p->children()[0];
  }
  return s;
}

struct Collector {
  Shape shape;
  bool have_kind = false;
  TensorData::Kind kind = TensorData::Kind::Floating;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  void walk(const TensorData& d, int64_t depth) {
    if (depth == shape.size()) {
      DDL_CHECK(!d.is_list(), "tensor: expected a number at depth ", depth, " (the first elements give shape ", shape,
                "), got a list of ", d.children().size(), " elements: nested lists must be rectangular");
      if (!have_kind) {
        have_kind = true;
        kind = d.kind();
      }
      DDL_CHECK(d.kind() == kind, "tensor: expected all elements to be of one type, ", kind_name(kind), ", but got a ",
                kind_name(d.kind()), " element (write 1.0 instead of 1 to mix, as in LibTorch)");
      if (kind == TensorData::Kind::Floating)
        floats.push_back(d.floating());
      else
        ints.push_back(d.integer());
      return;
    }
    DDL_CHECK(d.is_list(), "tensor: expected a list of ", shape[depth], " elements at depth ", depth,
              " (the first elements give shape ", shape, "), got a number: nested lists must be rectangular");
    DDL_CHECK(static_cast<int64_t>(d.children().size()) == shape[depth], "tensor: expected all sub-lists at depth ",
              depth, " to have ", shape[depth], " elements (the first elements give shape ", shape, "), got one with ",
              d.children().size(), ": nested lists must be rectangular");
    for (const TensorData& c : d.children()) walk(c, depth + 1);
  }
};

}  // namespace

Tensor tensor(const detail::TensorData& data, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "tensor");
  Collector c;
  c.shape = infer_shape(data);
  c.walk(data, 0);
  Tensor t;
  switch (c.kind) {
    case TensorData::Kind::Floating:               // the default dtype, as torch::tensor({1.5}) and Python's
      t = from_vector<double>(c.floats, c.shape);  // converted once, below, from the exact values
      if (!opts.has_dtype()) t = t.to(DType::Float32);
      break;
    case TensorData::Kind::Integer:
      t = from_vector<int64_t>(c.ints, c.shape);
      break;
    case TensorData::Kind::Byte:
    case TensorData::Kind::Bool: {
      std::vector<uint8_t> bytes(c.ints.begin(), c.ints.end());
      t = from_vector<uint8_t>(bytes, c.shape);
      if (c.kind == TensorData::Kind::Bool) t = t.to(DType::Bool);
      break;
    }
  }
  if (opts.has_dtype()) t = t.to(opts.dtype());
  return opts.has_device() ? t.to(opts.device()) : t;
}

}  // namespace ddl
