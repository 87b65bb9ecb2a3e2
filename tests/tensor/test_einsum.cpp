// einsum on tensors and Variables: PyTorch golden values for the common forms
// (tests/golden/sort_scan_einsum.py), finite-difference gradient checks,
// agreement with matmul, and the errors for what is not supported.
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/common/golden_seq.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::checksum;
using ddl::test::non_contiguous;
using ddl::test::random_double;
using ddl::test::seq;
using V = std::vector<Variable>;

namespace {

// ---- golden values printed by tests/golden/sort_scan_einsum.py ----
// einsum 'ij,jk->ik' [[3, 4], [4, 5]] -> [3, 5]
const std::vector<double> es_mm_y = {0.38778430526,    0.415588758384, 0.341642589291, 0.184050399137, -0.0186037477069,
                                     0.541173572424,   0.790205806713, 0.845768100127, 0.694256865437, 0.372767337033,
                                     0.00441257571144, 0.157085645006, 0.271298669849, 0.319088318442, 0.288754018086};
const double es_mm_g0 = -0.810344914784115;
const double es_mm_g1 = 1.92253205594922;
// einsum 'bij,bjk->bik' [[2, 3, 4], [2, 4, 2]] -> [2, 3, 2]
const std::vector<double> es_bmm_y = {0.78334570687, 0.239829996075, 1.85855073403,  1.64337051065,
                                      0.56357483426, 0.951146099953, 0.445027591904, -0.343810121058,
                                      1.41160752714, 0.800548259833, 0.577986275572, 0.923979860624};
const double es_bmm_g0 = -0.341085223791193;
const double es_bmm_g1 = -0.264470231724169;
// einsum 'ij->ji' [[3, 4]] -> [4, 3]
const std::vector<double> es_transpose_y = {0,
                                            0.932039085967,
                                            0.675463180551,
                                            0.295520206661,
                                            0.997494986604,
                                            0.427379880234,
                                            0.564642473395,
                                            0.973847630878,
                                            0.14112000806,
                                            0.783326909627,
                                            0.863209366649,
                                            -0.157745694143};
const double es_transpose_g0 = 1.3090150347786;
// einsum 'abc->cab' [[2, 3, 4]] -> [4, 2, 3]
const std::vector<double> es_permute_y = {0,
                                          0.932039085967,
                                          0.675463180551,
                                          -0.442520443295,
                                          -0.996164608836,
                                          -0.279415498199,
                                          0.295520206661,
                                          0.997494986604,
                                          0.427379880234,
                                          -0.687766159184,
                                          -0.925814682328,
                                          0.0168139004843,
                                          0.564642473395,
                                          0.973847630878,
                                          0.14112000806,
                                          -0.871575772414,
                                          -0.772764487556,
                                          0.311541363513,
                                          0.783326909627,
                                          0.863209366649,
                                          -0.157745694143,
                                          -0.977530117665,
                                          -0.550685542598,
                                          0.578439764388};
const double es_permute_g0 = 1.86665497808272;
// einsum 'ij->i' [[3, 4]] -> [3]
const std::vector<double> es_rowsum_y = {1.64348958968, 3.7665910701, 1.0862173747};
const double es_rowsum_g0 = 6.87576524872049;
// einsum 'ij->' [[3, 4]] -> []
const std::vector<double> es_total_y = {6.49629803448};
const double es_total_g0 = 0.978343786245036;
// einsum 'i,j->ij' [[3], [4]] -> [3, 4]
const std::vector<double> es_outer_y = {0,
                                        0,
                                        0,
                                        0,
                                        0.0295027919192,
                                        0.166863260427,
                                        0.263369783223,
                                        0.295394197744,
                                        0.0563701873029,
                                        0.318821122762,
                                        0.503213528093,
                                        0.564401711562};
const double es_outer_g0 = 0.391265566104498;
const double es_outer_g1 = 0.0753683359211491;
// einsum 'i,i->' [[5], [5]] -> []
const std::vector<double> es_dot_y = {2.25761455903};
const double es_dot_g0 = 0.233015257138549;
const double es_dot_g1 = 0.181959535464274;
// einsum 'bi,bj->bij' [[2, 3], [2, 4]] -> [2, 3, 4]
const std::vector<double> es_bilinear_y = {0,
                                           0,
                                           0,
                                           0,
                                           0.0295027919192,
                                           0.166863260427,
                                           0.263369783223,
                                           0.295394197744,
                                           0.0563701873029,
                                           0.318821122762,
                                           0.503213528093,
                                           0.564401711562,
                                           0.676175125539,
                                           0.403806096498,
                                           0.0325712518041,
                                           -0.346638171293,
                                           0.80454486909,
                                           0.480467427407,
                                           0.0387548026082,
                                           -0.41244634949,
                                           0.861047015622,
                                           0.514210033979,
                                           0.0414765023169,
                                           -0.441411923656};
const double es_bilinear_g0 = -0.413787557438937;
const double es_bilinear_g1 = 0.546720134027483;
// einsum 'bhqd,bhkd->bhqk' [[2, 2, 3, 4], [2, 2, 5, 4]] -> [2, 2, 3, 5]
const std::vector<double> es_attention_y = {
    1.45306968994,    -0.170818891277,  -1.31089820748,  1.26187117543,    0.260650811908,  2.38701815585,
    0.977260341084,   -3.2003857547,    1.68640047402,   1.79680530988,    0.276839387764,  0.879054616745,
    -1.00847098359,   -0.0397105976081, 1.04152186273,   2.58242792168,    -1.10734015739,  -1.66079571472,
    2.48960992305,    -0.411290872713,  2.69866702473,   -0.449409326208,  -2.32462648589,  2.38418124272,
    0.340287522063,   -0.626662075359,  0.781646248821,  -0.0238971521327, -0.761756800296, 0.657902517456,
    2.82262626529,    -2.48575861783,   -0.753745094835, 3.11309589139,    -1.8372649193,   1.83141233293,
    -0.965297406619,  -1.02800140875,   1.82089647505,   -0.487519206797,  -1.49537334433,  1.7861926165,
    0.00873653068769, -1.79346397572,   1.48395218922,   1.81980393878,    -3.07757367739,  0.741641161395,
    2.46031043106,    -2.78934196701,   0.760460180236,  -0.281677078958,  -0.526022129564, 0.719481969301,
    -0.072798161391,  -1.26868665222,   2.87343792975,   -1.12285755674,   -1.93889068949,  2.73658401043};
const double es_attention_g0 = 2.56339389498874;
const double es_attention_g1 = 7.18500826796158;
// einsum 'ii->' [[4, 4]] -> []
const std::vector<double> es_trace_y = {0.161084876999};
const double es_trace_g0 = 0.322231214438089;
// einsum 'ii->i' [[4, 4]] -> [4]
const std::vector<double> es_diag_y = {0, 0.997494986604, 0.14112000806, -0.977530117665};
const double es_diag_g0 = 2.00446956406521;
// einsum 'ij,jk' [[3, 4], [4, 2]] -> [3, 2]
const std::vector<double> es_implicit_y = {0.78334570687, 0.239829996075, 1.85855073403,
                                           1.64337051065, 0.56357483426,  0.951146099953};
const double es_implicit_g0 = 0.237136836532759;
const double es_implicit_g1 = 3.80915168189448;
// einsum 'ij,jk,kl->il' [[2, 3], [3, 4], [4, 2]] -> [2, 2]
const std::vector<double> es_chain_y = {-0.0580805242327, 0.25463399602, 0.165069077806, 0.339874483286};
const double es_chain_g0 = 0.359779967919383;
const double es_chain_g1 = 0.552576308331171;
const double es_chain_g2 = -1.7138844801819;
// einsum 'bii->bi' [[2, 3, 3]] -> [2, 3]
const std::vector<double> es_batch_diag_y = {
    0, 0.932039085967, 0.675463180551, 0.427379880234, -0.687766159184, -0.925814682328};
const double es_batch_diag_g0 = 0.629563459567137;
// einsum 'abc,cbd->ad' [[2, 3, 4], [4, 3, 5]] -> [2, 5]
const std::vector<double> es_contract2_y = {-1.51030404073, -1.60765844409, -1.31140199129, -0.694068594274,
                                            0.093197001107, 1.08389649715,  1.54737324431,  1.63199905473,
                                            1.3170545786,   0.67964920774};
const double es_contract2_g0 = -0.152795189223719;
const double es_contract2_g1 = 0.391852497371483;

struct Case {
  const char* equation;
  std::vector<Shape> shapes;
  const std::vector<double>& y;
  std::vector<double> grads;  // checksum of each operand's gradient
};

}  // namespace

TEST_CASE("einsum: values and gradients as PyTorch's", "[einsum][golden]") {
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}, es_mm_y, {es_mm_g0, es_mm_g1}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}, es_bmm_y, {es_bmm_g0, es_bmm_g1}},
      {"ij->ji", {{3, 4}}, es_transpose_y, {es_transpose_g0}},
      {"abc->cab", {{2, 3, 4}}, es_permute_y, {es_permute_g0}},
      {"ij->i", {{3, 4}}, es_rowsum_y, {es_rowsum_g0}},
      {"ij->", {{3, 4}}, es_total_y, {es_total_g0}},
      {"i,j->ij", {{3}, {4}}, es_outer_y, {es_outer_g0, es_outer_g1}},
      {"i,i->", {{5}, {5}}, es_dot_y, {es_dot_g0, es_dot_g1}},
      {"bi,bj->bij", {{2, 3}, {2, 4}}, es_bilinear_y, {es_bilinear_g0, es_bilinear_g1}},
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, es_attention_y, {es_attention_g0, es_attention_g1}},
      {"ii->", {{4, 4}}, es_trace_y, {es_trace_g0}},
      {"ii->i", {{4, 4}}, es_diag_y, {es_diag_g0}},
      {"ij,jk", {{3, 4}, {4, 2}}, es_implicit_y, {es_implicit_g0, es_implicit_g1}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, es_chain_y, {es_chain_g0, es_chain_g1, es_chain_g2}},
      {"bii->bi", {{2, 3, 3}}, es_batch_diag_y, {es_batch_diag_g0}},
      {"abc,cbd->ad", {{2, 3, 4}, {4, 3, 5}}, es_contract2_y, {es_contract2_g0, es_contract2_g1}},
  };
  for (const Case& c : cases) {
    INFO("einsum '" << c.equation << "'");
    std::vector<Variable> ops;
    std::vector<Tensor> tensors;
    for (size_t k = 0; k < c.shapes.size(); ++k) {
      tensors.push_back(seq(c.shapes[k], 0.3 + 0.2 * double(k), 0.1 * double(k)));
      ops.emplace_back(tensors.back().clone(), true);
    }
    const Variable y = einsum(c.equation, ops);
    const std::vector<double> got = to_vector<double>(y.data());
    REQUIRE(got.size() == c.y.size());
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(c.y[i]).margin(1e-10));
    // The tensor form computes the same values.
    REQUIRE(allclose(einsum(c.equation, tensors), y.data(), 1e-12, 1e-12));
    y.backward(seq(y.shape(), 0.9, 0.1));
    for (size_t k = 0; k < ops.size(); ++k) {
      INFO("gradient of operand " << k);
      REQUIRE(checksum(ops[k].grad()) == Approx(c.grads[k]).margin(1e-10));
    }
  }
}

TEST_CASE("einsum passes gradient checks, contiguous or not", "[einsum][grad]") {
  const Tensor a = random_double({2, 3, 4}, 1), b = random_double({2, 4, 5}, 2);
  REQUIRE_GRADCHECK([](const V& x) { return einsum("bij,bjk->bik", x); }, {a, non_contiguous(b)});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("bij,bjk->kbi", x); }, {non_contiguous(a), b});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("bij->jb", x); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("ii->i", x); }, {random_double({3, 3}, 3)});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("bi,bj->bij", x); },
                    {random_double({2, 3}, 4), random_double({2, 4}, 5)});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("ij,jk,k->i", x); },
                    {random_double({2, 3}, 6), random_double({3, 4}, 7), random_double({4}, 8)});
  REQUIRE_GRADCHECK([](const V& x) { return einsum("bhqd,bhkd->bhqk", x); },
                    {random_double({1, 2, 3, 4}, 9), random_double({1, 2, 2, 4}, 10)});
}

TEST_CASE("einsum agrees with matmul on float32, and with an explicit loop", "[einsum]") {
  const Tensor a = random_double({5, 7}, 11).to(DType::Float32), b = random_double({7, 3}, 12).to(DType::Float32);
  const Tensor y = einsum("ij,jk->ik", {a, b});
  REQUIRE(y.dtype() == DType::Float32);
  REQUIRE(allclose(y, matmul(a, b), 1e-6, 1e-6));
  // 'ijk,jl->lik' against a direct triple loop.
  const Tensor x = random_double({2, 3, 4}, 13), w = random_double({3, 5}, 14);
  const Tensor r = einsum("ijk,jl->lik", {x, w});
  REQUIRE(r.shape() == Shape{5, 2, 4});
  const auto xv = to_vector<double>(x), wv = to_vector<double>(w), rv = to_vector<double>(r);
  for (int l = 0; l < 5; ++l)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) {
        double s = 0;
        for (int j = 0; j < 3; ++j) s += xv[(i * 3 + j) * 4 + k] * wv[j * 5 + l];
        REQUIRE(rv[(l * 2 + i) * 4 + k] == Approx(s).margin(1e-12));
      }
}

TEST_CASE("einsum refuses what it does not support, naming the problem", "[einsum][errors]") {
  const Tensor a = zeros({2, 3}), b = zeros({4, 5});
  REQUIRE_THROWS_WITH(einsum("ij,jk->ik", {a, b}), Catch::Contains("subscript 'j' has size 3"));
  REQUIRE_THROWS_WITH(einsum("...ij->ij", {a}), Catch::Contains("ellipsis"));
  REQUIRE_THROWS_WITH(einsum("ijk->i", {a}), Catch::Contains("operand 0 has 2 dims"));
  REQUIRE_THROWS_WITH(einsum("ij,jk->ik", {a}), Catch::Contains("names 2 operands but 1 were given"));
  REQUIRE_THROWS_WITH(einsum("ij->ik", {a}), Catch::Contains("'k' does not appear"));
  REQUIRE_THROWS_WITH(einsum("ij->ii", {a}), Catch::Contains("appears twice"));
  REQUIRE_THROWS_WITH(einsum("i1->i", {a}), Catch::Contains("must be letters"));
  REQUIRE_THROWS_WITH(einsum("ii->i", {a}), Catch::Contains("subscript 'i' has size 2"));
}
