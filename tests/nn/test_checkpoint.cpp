// safetensors checkpoints: round trips, atomic writes, and bad files rejected clearly.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
namespace fs = std::filesystem;

namespace {
std::string ckpt_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ddl_ckpt_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}
std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const std::string& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}
}  // namespace

TEST_CASE("save then load gives identical outputs", "[nn][checkpoint]") {
  manual_seed(1);
  VGG a(11, true, 10, 1);
  Generator gen(3);
  const Variable x(randn({2, 1, 32, 32}, gen));
  a(x);  // a training step moves the running statistics
  a.eval();
  const auto ya = to_vector<float>(a(x).data());
  const std::string path = ckpt_path("vgg.safetensors");
  save_state(a, path, {{"epoch", "3"}});
  manual_seed(99);
  VGG b(11, true, 10, 1);
  b.eval();
  REQUIRE(to_vector<float>(b(x).data()) != ya);
  const auto meta = load_state(b, path);
  REQUIRE(meta.at("epoch") == "3");
  REQUIRE(to_vector<float>(b(x).data()) == ya);
  REQUIRE(b.features->named_children().size() == a.features->named_children().size());
  REQUIRE(std::static_pointer_cast<BatchNorm2d>((*b.features)[1])->num_batches_tracked.item() == 1);
}

TEST_CASE("the file layout is the safetensors format", "[nn][checkpoint]") {
  const std::string path = ckpt_path("small.safetensors");
  save_safetensors(path, {{"a", from_vector<float>({1, 2})}, {"b", from_vector<int64_t>({7}, {1, 1})}});
  const std::string bytes = read_file(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  REQUIRE(n % 8 == 0);
  REQUIRE(bytes.size() == 8 + n + 8 + 8);
  const std::string header = bytes.substr(8, n);
  REQUIRE(header.find("\"a\":{\"data_offsets\":[0,8],\"dtype\":\"F32\",\"shape\":[2]}") != std::string::npos);
  REQUIRE(header.find("\"b\":{\"data_offsets\":[8,16],\"dtype\":\"I64\",\"shape\":[1,1]}") != std::string::npos);
  float f;
  std::memcpy(&f, bytes.data() + 8 + n + 4, 4);
  REQUIRE(f == 2.0f);
  const TensorFile back = load_safetensors(path);
  REQUIRE(back.tensors[0].first == "a");
  REQUIRE(to_vector<int64_t>(back.tensors[1].second) == std::vector<int64_t>{7});
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))  // no temporary file left
    REQUIRE(e.path().filename().string().rfind(".small.safetensors.tmp.", 0) == std::string::npos);
}

TEST_CASE("truncated, garbage and mismatched files fail with the file and tensor named", "[nn][checkpoint]") {
  Linear lin(4, 3);
  const std::string good = ckpt_path("lin.safetensors");
  save_state(lin, good);
  const std::string bytes = read_file(good);
  const std::string bad = ckpt_path("bad.safetensors");

  write_file(bad, bytes.substr(0, bytes.size() - 5));
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("bad.safetensors") && Catch::Contains("truncated"));
  write_file(bad, bytes.substr(0, 5));
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("too short"));
  write_file(bad, std::string(64, '\xff'));
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("header"));
  std::string garbage = bytes;
  garbage[8] = '#';
  write_file(bad, garbage);
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("not valid JSON"));
  REQUIRE_THROWS_WITH(load_state(lin, ckpt_path("missing.safetensors")), Catch::Contains("cannot open"));

  Linear other(5, 3);
  REQUIRE_THROWS_WITH(load_state(other, good),
                      Catch::Contains("tensor 'weight' has shape [3, 4] but the model expects [3, 5]"));
  save_safetensors(bad, {{"weight", zeros({3, 4})}});
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("has no tensor 'bias'"));
  save_safetensors(bad, {{"weight", zeros({3, 4})}, {"bias", zeros({3})}, {"extra", zeros({1})}});
  REQUIRE_THROWS_WITH(load_state(lin, bad), Catch::Contains("holds 'extra'"));
  // A failed load leaves the module untouched.
  const auto before = to_vector<float>(lin.weight.data());
  REQUIRE_THROWS(load_state(lin, bad));
  REQUIRE(to_vector<float>(lin.weight.data()) == before);
  load_state(lin, bad, false);
  REQUIRE(to_vector<float>(lin.weight.data()) == std::vector<float>(12, 0));
}

TEST_CASE("a BOOL tensor holding a byte other than 0 or 1 is refused, naming the tensor", "[nn][checkpoint]") {
  const std::string path = ckpt_path("bools.safetensors");
  save_safetensors(path, {{"mask", from_vector<uint8_t>({0, 1, 1}).to(DType::Bool)}});
  REQUIRE(to_vector<uint8_t>(load_safetensors(path).tensors[0].second) == std::vector<uint8_t>{0, 1, 1});
  std::string bytes = read_file(path);
  bytes[bytes.size() - 1] = 7;  // the last element's byte
  write_file(path, bytes);
  // Reading byte 7 as a bool is undefined behaviour (UBSan: "load of value 7 ... not a valid value for type bool").
  REQUIRE_THROWS_WITH(load_safetensors(path),
                      Catch::Contains("tensor 'mask'") && Catch::Contains("element 2") && Catch::Contains("byte 7"));
}

TEST_CASE("load_state refuses non-finite weights unless allowed, naming the tensor", "[nn][checkpoint]") {
  manual_seed(0);
  Linear lin(4, 3);
  const std::string path = ckpt_path("nan.safetensors");
  Tensor w = zeros({3, 4});
  w.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  w.data<float>()[7] = std::numeric_limits<float>::infinity();
  save_safetensors(path, {{"weight", w}, {"bias", zeros({3})}});
  const auto before = to_vector<float>(lin.weight.data());
  REQUIRE_THROWS_WITH(load_state(lin, path), Catch::Contains(path) && Catch::Contains("tensor 'weight'") &&
                                                 Catch::Contains("1 NaN and 1 infinite values (of 12)") &&
                                                 Catch::Contains("--allow-nonfinite"));
  REQUIRE(to_vector<float>(lin.weight.data()) == before);
  load_state(lin, path, true, /*allow_nonfinite=*/true);
  REQUIRE(std::isnan(lin.weight.data().data<float>()[5]));
  REQUIRE(count_nonfinite(lin.weight.data()) == std::pair<int64_t, int64_t>{1, 1});
}

TEST_CASE("load_state checks values after converting to the model's dtype", "[nn][checkpoint]") {
  // 1e300 is finite in float64 but +inf once it is the float32 model's (PyTorch's
  // load_state_dict copies it so, silently).
  manual_seed(0);
  Linear lin(4, 3);
  const std::string path = ckpt_path("f64.safetensors");
  Tensor w = zeros({3, 4}, DType::Float64);
  w.data<double>()[2] = 1e300;
  save_safetensors(path, {{"weight", w}, {"bias", zeros({3}, DType::Float64)}});
  const auto before = to_vector<float>(lin.weight.data());
  REQUIRE_THROWS_WITH(load_state(lin, path), Catch::Contains(path) && Catch::Contains("tensor 'weight'") &&
                                                 Catch::Contains("0 NaN and 1 infinite values (of 12)") &&
                                                 Catch::Contains("float32"));
  REQUIRE(to_vector<float>(lin.weight.data()) == before);
  load_state(lin, path, true, /*allow_nonfinite=*/true);
  REQUIRE(std::isinf(lin.weight.data().data<float>()[2]));
}

TEST_CASE("load_state refuses non-finite buffers too", "[nn][checkpoint]") {
  BatchNorm2d bn(3);
  const std::string path = ckpt_path("bn.safetensors");
  save_state(bn, path);
  TensorFile f = load_safetensors(path);
  for (auto& [name, t] : f.tensors)
    if (name == "running_var") t.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  save_safetensors(path, f.tensors, f.metadata);
  REQUIRE_THROWS_WITH(load_state(bn, path), Catch::Contains("tensor 'running_var'") && Catch::Contains("1 NaN"));
}

TEST_CASE("load_state refuses directories and FIFOs at once", "[nn][checkpoint]") {
  Linear lin(4, 3);
  const std::string dir = ckpt_path("a_directory");
  std::filesystem::create_directories(dir);
  REQUIRE_THROWS_WITH(load_state(lin, dir), Catch::Contains(dir) && Catch::Contains("is a directory"));
  const std::string fifo = ckpt_path("a_fifo");
  std::filesystem::remove(fifo);
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(load_state(lin, fifo), Catch::Contains(fifo) && Catch::Contains("is a FIFO"));
  std::filesystem::remove(fifo);
  std::filesystem::remove(dir);
}

TEST_CASE("a save removes the temporaries of killed writers, not of live ones", "[nn][checkpoint]") {
  const std::string path = ckpt_path("stale.safetensors");
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);  // reaped: its PID names no process now
  // Named as files::AtomicFile names them: .NAME.tmp.PID.XXXXXX beside the file.
  const auto temp_of = [&](pid_t pid) {
    return ckpt_path(".stale.safetensors.tmp." + std::to_string(pid) + ".a1B2c3");
  };
  const std::string of_dead = temp_of(dead), of_live = temp_of(getppid()), fresh_dead = temp_of(999999);
  for (const auto& f : {of_dead, of_live, fresh_dead}) write_file(f, "partial");
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::minutes(5);
  std::filesystem::last_write_time(of_dead, old);
  std::filesystem::last_write_time(of_live, old);
  save_safetensors(path, {{"a", zeros({2})}});
  REQUIRE_FALSE(std::filesystem::exists(of_dead));
  REQUIRE(std::filesystem::exists(of_live));     // its writer still runs
  REQUIRE(std::filesystem::exists(fresh_dead));  // too recent to judge (another host's writer?)
  for (const auto& f : {of_live, fresh_dead, path}) std::filesystem::remove(f);
}
