// Reading the fortunes corpus into token ids.
#include "corpus.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace char_lm {

namespace fs = std::filesystem;

std::string Corpus::encode(const std::string& text) const {
  std::string out;
  for (char c : text)
    if (vocab.find(c) != std::string::npos) out += c;
  return out;
}

Corpus load_corpus(const std::string& dir, double val_fraction) {
  DDL_CHECK(val_fraction > 0 && val_fraction < 1, "load_corpus: val_fraction must be in (0, 1), got ", val_fraction);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && !e.is_symlink() && e.path().extension() != ".dat") files.push_back(e.path());
  DDL_CHECK(!ec, "load_corpus: cannot list ", dir, ": ", ec.message(), " (apt-get install fortunes)");
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string line;
    while (std::getline(in, line))
      if (line != "%") text += line + "\n";
  }
  DDL_CHECK(text.size() > 1000, "load_corpus: ", dir, " holds only ", text.size(),
            " bytes of text; the fortunes package puts about 2.4 MB there (apt-get install fortunes)");
  Corpus c;
  c.files = static_cast<int64_t>(files.size());
  std::array<bool, 256> seen{};
  for (unsigned char b : text) seen[b] = true;
  std::array<int64_t, 256> id{};
  for (int b = 0; b < 256; ++b)
    if (seen[b]) id[b] = static_cast<int64_t>(c.vocab.size()), c.vocab += static_cast<char>(b);
  const int64_t n = static_cast<int64_t>(text.size());
  ddl::Tensor all = ddl::empty({n}, ddl::DType::Int64);
  int64_t* p = all.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = id[static_cast<unsigned char>(text[i])];
  const int64_t n_val = static_cast<int64_t>(static_cast<double>(n) * val_fraction);
  c.train = all.narrow(0, 0, n - n_val);
  c.val = all.narrow(0, n - n_val, n_val);
  return c;
}

CharWindows::CharWindows(ddl::Tensor text, int64_t seq_len) : text_(std::move(text)), seq_len_(seq_len) {
  DDL_CHECK(seq_len >= 1 && text_.numel() > seq_len, "CharWindows: need a text longer than the window (", text_.numel(),
            " tokens, window ", seq_len, ")");
}

ddl::data::Example CharWindows::load(int64_t index) const {
  const int64_t start = index * seq_len_;
  return {text_.narrow(0, start, seq_len_), text_.narrow(0, start + 1, seq_len_)};
}

}  // namespace char_lm
