// The text a character-level language model learns from, and its windows as a
// ddl::data::Dataset. The default corpus is Debian's `fortunes` package (about
// 2.4 MB of English quotations in /usr/share/games/fortunes), read byte by byte:
// every distinct byte is a token. Validation is the last 10% of the text, as in
// Karpathy's char-rnn and nanoGPT, so no window straddles the two splits.
#pragma once

#include <string>

#include <ddl/ddl.h>

namespace char_lm {

struct Corpus {
  std::string vocab;                                  // the distinct bytes, sorted: token t is vocab[t]
  ddl::Tensor train;                                  // int64 [n_train] token ids
  ddl::Tensor val;                                    // int64 [n_val]
  int64_t files = 0;                                  // files read
  std::string encode(const std::string& text) const;  // unused bytes are dropped
};

// Reads every regular file of `dir` except fortune's index files (*.dat), sorted by
// name, dropping the '%' lines that separate quotations. Throws ddl::Error naming the
// folder when it holds no text (install the package: apt-get install fortunes).
Corpus load_corpus(const std::string& dir, double val_fraction = 0.1);

// Window i: x = text[i*T .. i*T + T), y = the same shifted by one (the next characters).
class CharWindows : public ddl::data::Dataset {
 public:
  CharWindows(ddl::Tensor text, int64_t seq_len);
  int64_t size() const override { return (text_.numel() - 1) / seq_len_; }

 protected:
  ddl::data::Example load(int64_t index) const override;

 private:
  ddl::Tensor text_;
  int64_t seq_len_;
};

}  // namespace char_lm
