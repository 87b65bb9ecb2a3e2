// The N-d convolution and pooling layers (nn/conv3d_layers.h, nn/pool_nd_layers.h): construction,
// forward shapes, clone, printing; and the 2-D pooling layers on unbatched [C, H, W] input.
#include <catch2/catch.hpp>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("2-D pooling layers accept unbatched [C, H, W] input as PyTorch's do", "[nn][pool]") {
  const Tensor x = arange(0.0, 32.0, 1.0).reshape({2, 4, 4});
  const Tensor xb = x.reshape({1, 2, 4, 4});
  for (Size2 out : {Size2(1), Size2(2), Size2(3)}) {
    AdaptiveAvgPool2d pool(out);
    const Variable y = pool(Variable(x));
    REQUIRE(y.shape() == Shape{2, out[0], out[1]});
    REQUIRE(to_vector<float>(y.data()) == to_vector<float>(pool(Variable(xb)).data()));
  }
  REQUIRE(AdaptiveMaxPool2d(3)(Variable(x)).shape() == Shape{2, 3, 3});
  REQUIRE(MaxPool2d(2)(Variable(x)).shape() == Shape{2, 2, 2});
  REQUIRE(AvgPool2d(2)(Variable(x)).shape() == Shape{2, 2, 2});
  REQUIRE_THROWS_WITH(AdaptiveAvgPool2d(2)(Variable(zeros({4, 4}))), Catch::Contains("AdaptiveAvgPool2d"));
}

TEST_CASE("Conv3d and the transposed convolutions: shapes, options, clone, printing", "[nn][conv]") {
  manual_seed(0);
  Conv3d conv(2, 4, 3);
  REQUIRE(conv.weight.shape() == Shape{4, 2, 3, 3, 3});
  REQUIRE(conv(Variable(zeros({1, 2, 5, 6, 7}))).shape() == Shape{1, 4, 3, 4, 5});
  REQUIRE(conv(Variable(zeros({2, 5, 6, 7}))).shape() == Shape{4, 3, 4, 5});
  Conv3d strided(Conv3dOptions(4, 6, {1, 3, 3}).stride(2).padding({0, 1, 1}).groups(2).bias(false));
  REQUIRE(strided.weight.shape() == Shape{6, 2, 1, 3, 3});
  REQUIRE(!strided.bias.defined());
  REQUIRE(strided(Variable(zeros({1, 4, 5, 6, 6}))).shape() == Shape{1, 6, 3, 3, 3});
  REQUIRE(strided.extra_repr() ==
          "4, 6, kernel_size=(1, 3, 3), stride=(2, 2, 2), padding=(0, 1, 1), groups=2, "
          "bias=False");
  auto copy = std::dynamic_pointer_cast<Conv3d>(conv.clone());
  REQUIRE(to_vector<float>(copy->weight.data()) == to_vector<float>(conv.weight.data()));
  REQUIRE(copy->weight.data().raw_data() != conv.weight.data().raw_data());

  ConvTranspose1d t1(3, 2, 4);
  REQUIRE(t1.weight.shape() == Shape{3, 2, 4});
  REQUIRE(t1(Variable(zeros({2, 3, 5}))).shape() == Shape{2, 2, 8});
  ConvTranspose1d t1s(ConvTranspose1dOptions(3, 2, 3).stride(2).output_padding(1));
  REQUIRE(t1s(Variable(zeros({3, 5}))).shape() == Shape{2, 12});
  ConvTranspose3d t3(ConvTranspose3dOptions(2, 4, 2).stride({2, 1, 1}).groups(2));
  REQUIRE(t3.weight.shape() == Shape{2, 2, 2, 2, 2});
  REQUIRE(t3(Variable(zeros({1, 2, 3, 3, 3}))).shape() == Shape{1, 4, 6, 4, 4});
  REQUIRE(t3.clone()->extra_repr() == "2, 4, kernel_size=(2, 2, 2), stride=(2, 1, 1), groups=2");
  REQUIRE_THROWS_WITH(ConvTranspose3d(ConvTranspose3dOptions(2, 4, 2).stride(2).output_padding(2)),
                      Catch::Contains("ConvTranspose3d: output_padding"));
  REQUIRE_THROWS_WITH(Conv3d(Conv3dOptions(3, 4, 3).groups(2)), Catch::Contains("Conv3d: groups=2"));
  REQUIRE_THROWS_WITH(conv(Variable(zeros({1, 3, 5, 5, 5}))), Catch::Contains("conv3d"));
}

TEST_CASE("N-d pooling layers: shapes, options, clone, printing", "[nn][pool]") {
  const Variable x1(arange(0.0, 24.0, 1.0).reshape({2, 3, 4}));
  const Variable x3(arange(0.0, 128.0, 1.0).reshape({1, 2, 4, 4, 4}));
  REQUIRE(MaxPool1d(2)(x1).shape() == Shape{2, 3, 2});
  REQUIRE(to_vector<float>(MaxPool1d(2)(x1).data())[0] == 1);
  REQUIRE(MaxPool1d(MaxPool1dOptions(3).stride(1).padding(1))(x1).shape() == Shape{2, 3, 4});
  REQUIRE(MaxPool3d(2)(x3).shape() == Shape{1, 2, 2, 2, 2});
  REQUIRE(MaxPool3d({1, 2, 2})(x3).shape() == Shape{1, 2, 4, 2, 2});
  REQUIRE(MaxPool3d(MaxPool3dOptions(3).stride(2).ceil_mode(true))(x3).shape() == Shape{1, 2, 2, 2, 2});
  REQUIRE(AvgPool1d(AvgPool1dOptions(3).stride(2).padding(1).count_include_pad(false))(x1).shape() == Shape{2, 3, 2});
  REQUIRE(to_vector<float>(AvgPool3d(4)(x3).data()) == std::vector<float>{31.5f, 95.5f});
  REQUIRE(AdaptiveAvgPool1d(3)(x1).shape() == Shape{2, 3, 3});
  REQUIRE(AdaptiveAvgPool3d(AdaptiveAvgPool3dOptions({1, 2, 3}))(x3).shape() == Shape{1, 2, 1, 2, 3});
  REQUIRE(AdaptiveMaxPool1d(1)(x1).shape() == Shape{2, 3, 1});
  REQUIRE(to_vector<float>(AdaptiveMaxPool3d(1)(x3).data()) == std::vector<float>{63, 127});
  REQUIRE(LPPool1d(2, 2)(x1).shape() == Shape{2, 3, 2});
  REQUIRE(LPPool2d(LPPool2dOptions(1, {2, 2}).stride(1))(Variable(ones({1, 3, 3}))).shape() == Shape{1, 2, 2});
  REQUIRE(to_vector<float>(LPPool2d(1, 2)(Variable(ones({1, 2, 2}))).data()) == std::vector<float>{4});

  MaxPool3d pool(2);
  auto [y, idx] = pool.forward_with_indices(x3);
  MaxUnpool3d unpool(2);
  const Variable back = unpool(y, idx);
  REQUIRE(back.shape() == x3.shape());
  REQUIRE(to_vector<float>(sum(back).data())[0] == to_vector<float>(sum(y).data())[0]);
  REQUIRE(MaxUnpool1d(MaxUnpool1dOptions(2).stride(2))(MaxPool1d(2)(x1), MaxPool1d(2).forward_with_indices(x1).second,
                                                       std::vector<int64_t>{5})
              .shape() == Shape{2, 3, 5});

  // The 2-D max pools give their indices too, for MaxUnpool2d.
  const Variable x2(arange(0.0, 32.0, 1.0).reshape({2, 4, 4}));
  const auto [y2, i2] = MaxPool2d(2).forward_with_indices(x2);
  REQUIRE(to_vector<int64_t>(i2) == std::vector<int64_t>{5, 7, 13, 15, 5, 7, 13, 15});
  REQUIRE(to_vector<float>(MaxUnpool2d(2)(y2, i2).data())[5] == 5);
  REQUIRE(to_vector<int64_t>(AdaptiveMaxPool2d(1).forward_with_indices(x2).second) == std::vector<int64_t>{15, 15});

  REQUIRE(MaxPool3d(MaxPool3dOptions({1, 2, 2})).extra_repr() ==
          "kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=0, dilation=1, ceil_mode=False");
  REQUIRE(AvgPool1d(2).extra_repr() == "kernel_size=2, stride=2, padding=0");
  REQUIRE(LPPool1d(2, 3).extra_repr() == "norm_type=2.0, kernel_size=3, stride=3, ceil_mode=False");
  REQUIRE(MaxUnpool2d(2).extra_repr() == "kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)");
  std::vector<std::shared_ptr<Module>> mods = {
      std::make_shared<MaxPool1d>(2),         std::make_shared<MaxPool3d>(2),
      std::make_shared<AvgPool1d>(2),         std::make_shared<AvgPool3d>(2),
      std::make_shared<AdaptiveAvgPool1d>(2), std::make_shared<AdaptiveAvgPool3d>(2),
      std::make_shared<AdaptiveMaxPool1d>(2), std::make_shared<AdaptiveMaxPool3d>(2),
      std::make_shared<LPPool1d>(2, 2),       std::make_shared<LPPool2d>(2, 2),
      std::make_shared<MaxUnpool1d>(2),       std::make_shared<MaxUnpool2d>(2),
      std::make_shared<MaxUnpool3d>(2)};
  for (const auto& m : mods) {
    const auto c = m->clone();
    REQUIRE(c->type_name() == m->type_name());
    REQUIRE(c->extra_repr() == m->extra_repr());
  }
  REQUIRE_THROWS_WITH(MaxPool1d(2)(Variable(zeros({1, 1, 1, 4}))), Catch::Contains("max_pool1d"));
  REQUIRE_THROWS_WITH(AdaptiveAvgPool3d(2)(Variable(zeros({2, 4, 4}))), Catch::Contains("adaptive_avg_pool3d"));
}

TEST_CASE("N-d layers in a Sequential, printed, and conv3d under autocast", "[nn][conv]") {
  manual_seed(1);
  Sequential net(Conv3d(Conv3dOptions(1, 2, 3).padding(1)), MaxPool3d(2), AdaptiveAvgPool3d(1), Flatten(),
                 Linear(2, 1));
  REQUIRE(net(Variable(randn({2, 1, 4, 4, 4}))).shape() == Shape{2, 1});
  std::ostringstream os;
  os << net;
  REQUIRE_THAT(os.str(), Catch::Contains("(0): Conv3d(1, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1), "
                                         "padding=(1, 1, 1))"));
  REQUIRE_THAT(os.str(), Catch::Contains("(2): AdaptiveAvgPool3d(output_size=1)"));
  // Under bfloat16 autocast the convolutions compute in bfloat16, as conv2d does.
  Conv3d conv(2, 3, 2);
  ConvTranspose3d convt(2, 3, 2);
  const Variable x(randn({1, 2, 3, 3, 3}));
  autocast::Guard guard(DType::BFloat16);
  REQUIRE(conv(x).dtype() == DType::BFloat16);
  REQUIRE(convt(x).dtype() == DType::BFloat16);
}
