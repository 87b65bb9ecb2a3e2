// Rows: the sequence models' functional pieces (nn/transformer_decoder.h). The modules themselves
// (RNN, RNNCell, TransformerDecoderLayer, TransformerDecoder, Transformer) are checked against PyTorch
// with copied weights in tests/nn/test_seq_models.cpp.
#include "sweep.h"
#include <ddl/nn/transformer_decoder.h>

namespace ddl::sweep {

void add_seq_models_rows(std::vector<Row>& rows) {
  std::vector<Sample> sizes;
  for (int64_t n : {1, 4, 0, -2}) sizes.push_back({"sz " + std::to_string(n), {}, {{"sz", n}}});
  rows.push_back(ten_only(
      "generate_square_subsequent_mask", "lambda sz: torch.nn.Transformer.generate_square_subsequent_mask(sz)",
      [](const auto&, const json& a) { return nn::Transformer::generate_square_subsequent_mask(i64(a, "sz")); },
      sizes));
}

}  // namespace ddl::sweep
