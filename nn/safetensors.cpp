// safetensors reading and writing, with every header field validated so a
// truncated or garbage file gives an error, never a crash or silent garbage.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include <ddl/nn/safetensors.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::nn {

namespace {

using json = nlohmann::json;
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit

const char* st_dtype(DType t) {
  switch (t) {
    case DType::Float32:
      return "F32";
    case DType::Float64:
      return "F64";
    case DType::Int64:
      return "I64";
    case DType::Int32:
      return "I32";
    case DType::Int16:
      return "I16";
    case DType::Int8:
      return "I8";
    case DType::UInt8:
      return "U8";
    case DType::Bool:
      return "BOOL";
    case DType::Float16:
      return "F16";
    case DType::BFloat16:
      return "BF16";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType& out) {
  static const std::map<std::string, DType> m = {
      {"F32", DType::Float32}, {"F64", DType::Float64},  {"I64", DType::Int64}, {"I32", DType::Int32},
      {"I16", DType::Int16},   {"I8", DType::Int8},      {"U8", DType::UInt8},  {"BOOL", DType::Bool},
      {"F16", DType::Float16}, {"BF16", DType::BFloat16}};
  auto it = m.find(s);
  if (it == m.end()) return false;
  out = it->second;
  return true;
}

// Removes the temporary files (files::temp_prefix: .NAME.tmp.PID.XXXXXX) of writers that no
// longer exist (killed mid-write): one would otherwise stay per kill, forever. A live writer's file is left alone. PIDs
// are this host's: on a filesystem shared between hosts, another host's writer could be mistaken for a dead one here,
// so only files at least a minute old are removed.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size()), digits = rest.substr(0, rest.find('.'));
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code age_ec;
    const auto written = fs::last_write_time(it->path(), age_ec);
    if (age_ec || fs::file_time_type::clock::now() - written < std::chrono::minutes(1)) continue;
    fs::remove(it->path(), age_ec);
  }
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata, unsigned mode) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> blobs;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    DDL_CHECK(t.defined(), "save_safetensors: tensor '", name, "' is undefined");
    DDL_CHECK(names.insert(name).second, "save_safetensors: duplicate tensor name '", name, "'");
    const Tensor c = t.to(Device::cpu()).contiguous();
    header[name] = {
        {"dtype", st_dtype(c.dtype())}, {"shape", c.shape().vec()}, {"data_offsets", {offset, offset + c.nbytes()}}};
    offset += c.nbytes();
    blobs.push_back(c);
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  const uint64_t n = h.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));

  remove_stale_temporaries(path);
  files::AtomicFile out(path, "save_safetensors", mode);
  out.write(len, 8);
  out.write(h);
  for (const Tensor& b : blobs) out.write(b.raw_data(), b.nbytes());
  out.commit();
}

TensorFile load_safetensors(const std::string& path) {
  files::check_no_planted_link(path, "load_safetensors");  // weights of another user's choosing
  // Regular files only: a FIFO would block the open forever, a directory "opens" and
  // reads nothing (its header length came from uninitialised bytes).
  struct stat st {};
  DDL_CHECK(::stat(path.c_str(), &st) == 0, "load_safetensors: cannot open ", path, ": ", std::strerror(errno));
  DDL_CHECK(S_ISREG(st.st_mode), "load_safetensors: ", path, " is ",
            S_ISDIR(st.st_mode) ? "a directory" : (S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file"),
            ", expected a safetensors file");
  std::ifstream in(path, std::ios::binary);
  DDL_CHECK(in.good(), "load_safetensors: cannot open ", path);
  in.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  DDL_CHECK(file_size >= 8, "load_safetensors: ", path, " is ", file_size,
            " bytes, too short for the 8-byte header length");
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  DDL_CHECK(in.gcount() == 8, "load_safetensors: ", path, ": cannot read the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  DDL_CHECK(n <= kMaxHeaderBytes && n <= file_size - 8, "load_safetensors: ", path, " declares a ", n,
            "-byte header but the file has ", file_size - 8, " bytes after the length (truncated or not safetensors)");
  std::string h(n, '\0');
  in.read(h.data(), static_cast<std::streamsize>(n));
  json header;
  try {
    header = json::parse(h);
  } catch (const std::exception& e) {
    DDL_CHECK(false, "load_safetensors: ", path, ": header is not valid JSON (", e.what(), ")");
  }
  DDL_CHECK(header.is_object(), "load_safetensors: ", path, ": header is not a JSON object");

  const uint64_t data_size = file_size - 8 - n;
  TensorFile out;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& e = it.value();
    if (name == "__metadata__") {
      DDL_CHECK(e.is_object(), "load_safetensors: ", path, ": __metadata__ must map strings to strings");
      for (auto m = e.begin(); m != e.end(); ++m) {
        DDL_CHECK(m.value().is_string(), "load_safetensors: ", path, ": metadata '", m.key(), "' is not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "load_safetensors: " + path + ": tensor '" + name + "'";
    DDL_CHECK(e.is_object() && e.contains("dtype") && e.contains("shape") && e.contains("data_offsets"), where,
              " needs dtype, shape and data_offsets");
    DType dtype;
    DDL_CHECK(e["dtype"].is_string() && parse_dtype(e["dtype"].get<std::string>(), dtype), where, " has unknown dtype ",
              e["dtype"].dump());
    DDL_CHECK(e["shape"].is_array(), where, ": shape must be an array");
    std::vector<int64_t> dims;
    for (const json& d : e["shape"]) {
      DDL_CHECK(d.is_number_unsigned() && d.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX), where,
                ": shape entries must be non-negative integers below 2^63, got ", d.dump());
      dims.push_back(d.get<int64_t>());
    }
    const json& off = e["data_offsets"];
    DDL_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() && off[1].is_number_unsigned(), where,
              ": data_offsets must be two non-negative integers");
    const uint64_t b = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    const Shape shape(dims);
    // A declared shape can overflow the element or byte count (2^62 float32s need 2^64
    // bytes): checked, or a wrapped count could match the stored bytes (Shape::numel).
    int64_t count = 1, nbytes = 0;
    bool overflow = false;
    for (int64_t d : dims) overflow |= __builtin_mul_overflow(count, d, &count);
    overflow |= __builtin_mul_overflow(count, static_cast<int64_t>(dtype_size(dtype)), &nbytes);
    DDL_CHECK(!overflow, where, ": shape ", shape, " of dtype ", dtype_name(dtype),
              " has more bytes than int64 can count");
    const uint64_t expected = static_cast<uint64_t>(nbytes);
    DDL_CHECK(b <= end && end <= data_size, where, ": data_offsets [", b, ", ", end, ") exceed the ", data_size,
              " data bytes (truncated file?)");
    DDL_CHECK(end - b == expected, where, ": ", end - b, " bytes stored but dtype ", dtype_name(dtype), " and shape ",
              shape, " need ", expected);
    Tensor t = empty(shape, dtype);
    in.seekg(static_cast<std::streamoff>(8 + n + b));
    in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(expected));
    DDL_CHECK(in.good() || expected == 0, where, ": read failed");
    if (dtype == DType::Bool) {  // any other byte read as a bool is undefined behaviour
      const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
      for (uint64_t i = 0; i < expected; ++i)
        DDL_CHECK(bytes[i] <= 1, where, ": element ", i, " of a BOOL tensor is byte ", int(bytes[i]),
                  "; a bool is stored as 0 or 1");
    }
    ranges.emplace_back(b, end);
    out.tensors.emplace_back(name, t);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    DDL_CHECK(ranges[i].first >= ranges[i - 1].second, "load_safetensors: ", path,
              ": tensors overlap in the data section");
  // Keep the file's order (by offset) rather than JSON key order.
  std::sort(out.tensors.begin(), out.tensors.end(), [&](const auto& a, const auto& b) {
    return header[a.first]["data_offsets"][0].template get<uint64_t>() <
           header[b.first]["data_offsets"][0].template get<uint64_t>();
  });
  return out;
}

}  // namespace ddl::nn
