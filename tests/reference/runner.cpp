// The sweep's runner: evaluates every sample of every row in ddl and writes one JSON line per case (inputs,
// outputs or the error, gradients of sum(out * cotangent) and, where claimed, double-backward gradients).
// Each row runs in a forked child, so a crash, abort or hang is recorded for that case and the row goes on
// in a new child from the next case.
// The parent never runs a ddl op: a fork taken after the thread pool started would inherit no workers.
// Usage: reference_runner OUT.jsonl [--op NAME]... [--list-ops]
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "sweep.h"

namespace ddl::sweep {
namespace {

constexpr int kCaseTimeoutS = 20;

std::string base64(const unsigned char* p, size_t n) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t b = (uint32_t(p[i]) << 16) | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += k[(b >> 18) & 63];
    out += k[(b >> 12) & 63];
    out += i + 1 < n ? k[(b >> 6) & 63] : '=';
    out += i + 2 < n ? k[b & 63] : '=';
  }
  return out;
}

// dtype, shape and the raw bytes of the contiguous logical values; null for an undefined tensor.
json encode(const Tensor& t) {
  if (!t.defined()) return nullptr;
  const Tensor c = t.contiguous();
  return {{"dtype", dtype_name(c.dtype())},
          {"shape", c.shape().vec()},
          {"data", base64(static_cast<const unsigned char*>(c.raw_data()), c.nbytes())}};
}

Tensor build(const Input& in) {
  const int64_t nd = static_cast<int64_t>(in.shape.size());
  const Tensor logical = from_vector<double>(in.values, Shape(in.shape)).to(in.dtype);
  if (in.layout == "transposed") return logical.transpose(nd - 2, nd - 1).contiguous().transpose(nd - 2, nd - 1);
  if (in.layout == "stepped") {
    std::vector<int64_t> wide = in.shape;
    wide.back() *= 2;
    const Tensor buf = zeros(Shape(wide), in.dtype);
    const Tensor view = buf.slice(nd - 1, 0, wide.back(), 2);
    view.copy_(logical);
    return view;
  }
  if (in.layout == "expanded") {
    const int64_t d = in.expand_dim < 0 ? in.expand_dim + nd : in.expand_dim;
    return logical.select(d, 0).contiguous().unsqueeze(d).expand(Shape(in.shape));
  }
  return logical;
}

Tensor random_like(const Shape& shape, DType dtype, uint64_t seed) {
  const Input r = make(DType::Float64, shape.vec(), seed, -1.0, 1.0);
  return from_vector<double>(r.values, shape).to(dtype);
}

void emit(int fd, const json& j) {
  const std::string s = j.dump() + "\n";
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = write(fd, s.data() + off, s.size() - off);
    if (w <= 0) _exit(3);
    off += w;
  }
}

json encode_all(const Outs& o) {
  json a = json::array();
  for (const Variable& v : o) a.push_back(v.defined() ? encode(v.data()) : json(nullptr));
  return a;
}

// Runs one case and reports each stage as a JSON line on `fd`: "begin" before a stage, its result after.
void run_case(const Row& row, const Sample& s, uint64_t seed, int fd) {
  set_num_threads(1);
  manual_seed(0);  // every case starts from the process's initial draws, whatever ran before it
  std::vector<Tensor> ts;
  json inputs = json::array();
  for (const Input& in : s.inputs) {
    ts.push_back(build(in));
    json e = encode(ts.back());
    e["layout"] = in.layout;
    e["expand_dim"] = in.expand_dim;
    inputs.push_back(e);
  }
  emit(fd, {{"stage", "inputs"}, {"inputs", inputs}});
  auto stage = [&](const char* name, const std::function<json()>& body) {
    emit(fd, {{"begin", name}});
    json r;
    try {
      r = body();
    } catch (const Skip&) {
      r = {{"skipped", true}};
    } catch (const std::exception& e) {
      r = {{"error", e.what()}};
    }
    r["stage"] = name;
    emit(fd, r);
    return r;
  };
  if (row.var) {
    std::vector<Variable> vs;
    std::vector<Variable> diff_in;
    json diff_idx = json::array();
    for (size_t i = 0; i < ts.size(); ++i) {
      const bool d = i < row.diff.size() && row.diff[i] && is_floating(ts[i].dtype());
      vs.emplace_back(ts[i], d);
      if (d) diff_in.push_back(vs.back()), diff_idx.push_back(i);
    }
    Outs out;
    const json fw = stage("var_forward", [&] {
      out = row.var(vs, s.args);
      return json{{"outputs", encode_all(out)}};
    });
    if (!fw.contains("error") && !fw.contains("skipped") && !diff_in.empty()) {
      std::vector<Variable> grads;
      const json g = stage("var_grad", [&] {
        std::vector<Variable> douts, cots;
        json cot_json = json::array();
        for (size_t i = 0; i < out.size(); ++i) {
          if (out[i].defined() && out[i].requires_grad() && is_floating(out[i].dtype())) {
            const Tensor c = random_like(out[i].shape(), out[i].dtype(), seed * 31 + i);
            douts.push_back(out[i]);
            cots.emplace_back(c);
            cot_json.push_back(encode(c));
          } else {
            cot_json.push_back(nullptr);
          }
        }
        json r = {{"diff", diff_idx}, {"cotangents", cot_json}};
        if (douts.empty()) return r;
        grads = autograd::grad(douts, diff_in, cots, true, row.double_backward, true);
        json ga = json::array();
        for (const Variable& v : grads) ga.push_back(v.defined() ? encode(v.data()) : json(nullptr));
        r["grads"] = ga;
        return r;
      });
      if (row.double_backward && g.contains("grads")) {
        stage("var_double", [&] {
          Variable total;
          json vj = json::array();
          for (size_t i = 0; i < grads.size(); ++i) {
            if (!grads[i].defined()) {
              vj.push_back(nullptr);
              continue;
            }
            const Tensor v = random_like(grads[i].shape(), grads[i].dtype(), seed * 37 + i);
            vj.push_back(encode(v));
            if (!grads[i].requires_grad()) continue;
            const Variable term = sum(mul(grads[i], Variable(v)));
            total = total.defined() ? add(total, term) : term;
          }
          json r = {{"v", vj}};
          if (!total.defined()) return r;  // every gradient is constant in the inputs
          const auto gg = autograd::grad({total}, diff_in, {}, std::nullopt, false, true);
          json ga = json::array();
          for (const Variable& x : gg) ga.push_back(x.defined() ? encode(x.data()) : json(nullptr));
          r["grads2"] = ga;
          return r;
        });
      }
    }
  }
  if (row.ten) {
    std::vector<Tensor> fresh;  // the Variable call may have updated inputs in place (running statistics)
    for (const Input& in : s.inputs) fresh.push_back(build(in));
    stage("ten_forward", [&] { return json{{"outputs", encode_all(row.ten(fresh, s.args))}}; });
  }
}

// Runs samples [first, end) of a row in one forked child, case after case: a fork per
// case costs more than most cases do under ASan. Each case is framed by {"case": i} and
// {"case_end": i} lines. Returns the records of the cases that ran to their end, and, when
// the child died (signal, exit, hang), the open case's record with a "crash" stage; the
// caller resumes the row after it in a new child.
std::vector<json> isolate_from(const Row& row, size_t first, uint64_t seed0, size_t& next) {
  int p[2];
  if (pipe(p) != 0) throw std::runtime_error("pipe failed");
  std::cout.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    for (size_t i = first; i < row.samples.size(); ++i) {
      emit(p[1], {{"case", i}});
      alarm(kCaseTimeoutS);
      try {
        run_case(row, row.samples[i], seed0 + i, p[1]);
      } catch (const std::exception& e) {
        emit(p[1], {{"stage", "setup"}, {"error", e.what()}});
      }
      emit(p[1], {{"case_end", i}});
    }
    _exit(0);
  }
  close(p[1]);
  std::string buf;
  char chunk[65536];
  // A hang is SIGALRM in the child; this deadline (quiet for longer) is the backstop.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kCaseTimeoutS + 10);
  bool killed = false;
  for (;;) {
    pollfd pf{p[0], POLLIN, 0};
    const int r = poll(&pf, 1, 1000);
    if (r > 0) {
      const ssize_t n = read(p[0], chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, n);
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kCaseTimeoutS + 10);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::vector<json> done;
  json rec = json::object();
  bool open_case = false;
  std::string open_stage;
  next = row.samples.size();
  size_t start = 0;
  while (start < buf.size()) {
    const size_t end = buf.find('\n', start);
    if (end == std::string::npos) break;
    const json j = json::parse(buf.substr(start, end - start));
    start = end + 1;
    if (j.contains("case")) {
      rec = json::object(), open_case = true, open_stage.clear();
      next = j["case"].get<size_t>() + 1;
    } else if (j.contains("case_end")) {
      done.push_back(rec), open_case = false;
    } else if (j.contains("begin")) {
      open_stage = j["begin"];
    } else {
      rec[j["stage"].get<std::string>()] = j;
      open_stage.clear();
    }
  }
  const bool died = killed || WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  if (died && open_case) {
    const std::string why =
        killed ? "hang (killed)"
        : WIFSIGNALED(status)
            ? (WTERMSIG(status) == SIGALRM ? std::string("hang (timeout)") : std::string(strsignal(WTERMSIG(status))))
            : "exit " + std::to_string(WEXITSTATUS(status));
    const std::string st = open_stage.empty() ? "setup" : open_stage;
    rec[st] = {{"stage", st}, {"crash", why}};
    done.push_back(rec);
  } else if (died || done.size() != row.samples.size() - first) {
    throw std::runtime_error("reference_runner: the child for row " + row.name + " ended outside a case");
  }
  return done;
}

// Every case of a row, in order, each under its own seed (seed0 + its index).
std::vector<json> isolate_row(const Row& row, uint64_t seed0) {
  std::vector<json> recs;
  for (size_t first = 0; first < row.samples.size();) {
    size_t next = 0;
    for (json& r : isolate_from(row, first, seed0, next)) recs.push_back(std::move(r));
    first = next;
  }
  return recs;
}

}  // namespace
}  // namespace ddl::sweep

int main(int argc, char** argv) {
  using namespace ddl::sweep;
  std::vector<std::string> only;
  std::string out_path;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--op" && i + 1 < argc) {
      only.push_back(argv[++i]);
    } else if (a == "--list-ops") {
      list = true;
    } else {
      out_path = a;
    }
  }
  const std::vector<Row> rows = all_rows();
  if (list) {
    for (const Row& r : rows) std::cout << r.name << "\n";
    return 0;
  }
  if (out_path.empty()) {
    std::cerr << "usage: reference_runner OUT.jsonl [--op NAME]... [--list-ops]\n";
    return 2;
  }
  std::ofstream out(out_path);
  uint64_t seed = 0, cases = 0;
  for (const Row& row : rows) {
    if (!only.empty() && std::find(only.begin(), only.end(), row.name) == only.end()) continue;
    const std::vector<json> recs = isolate_row(row, seed + 1);
    for (size_t i = 0; i < row.samples.size(); ++i) {
      const Sample& s = row.samples[i];
      json rec = recs[i];
      rec["op"] = row.name;
      rec["tag"] = s.tag;
      rec["args"] = s.args;
      rec["torch"] = row.torch;
      rec["double_backward"] = row.double_backward;
      rec["diff"] = row.diff;
      rec["meta"] = row.meta;
      out << rec.dump() << "\n";
      ++cases;
    }
    seed += row.samples.size();
  }
  std::cout << "reference_runner: " << cases << " cases written to " << out_path << "\n";
  return 0;
}
