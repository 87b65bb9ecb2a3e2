// The LibTorch spelling, where it maps one to one onto ddl: `#include <ddl/torch.h>` (installed
// as <ddl/torch.h>) and a LibTorch program's construction and training code compiles as
// written: torch::Tensor (a ddl::Variable), torch::nn::Linear (a holder of ddl::nn::Linear),
// torch::nn::Conv2dOptions(3, 64, 3).stride(2), torch::optim::SGD, TORCH_MODULE(Net), ...
// Only names whose ddl meaning is LibTorch's are here; docs/libtorch.md lists the rest and
// the differences. Not a compatibility layer: no torch::jit, no torch::data pipeline, no
// ATen dispatch.
#pragma once

#include <ddl/ddl.h>
#include <ddl/nn/module_holder.h>

// TORCH_MODULE(Net): the holder class Net of NetImpl.
#define TORCH_MODULE(Name) DDL_MODULE(Name)

namespace torch {

// LibTorch's one tensor type records the graph when asked: ddl's Variable. A plain
// ddl::Tensor (what the factories return) converts to it implicitly.
using Tensor = ddl::Variable;
using ddl::Device;
using ddl::manual_seed;
using ddl::NoGradGuard;
using Dtype = ddl::DType;
using ScalarType = ddl::DType;

// The dtype constants are ddl's own (tensor/core/dtype.h), so both spellings name the same objects.
using ddl::kBFloat16;
using ddl::kBool;
using ddl::kByte;
using ddl::kChar;
using ddl::kDouble;
using ddl::kFloat;
using ddl::kFloat16;
using ddl::kFloat32;
using ddl::kFloat64;
using ddl::kHalf;
using ddl::kInt;
using ddl::kInt16;
using ddl::kInt32;
using ddl::kInt64;
using ddl::kInt8;
using ddl::kLong;
using ddl::kShort;
using ddl::kUInt8;

// Loss reductions: NLLLossOptions().reduction(torch::kSum).
inline constexpr ddl::Reduction kNone = ddl::Reduction::None;
inline constexpr ddl::Reduction kMean = ddl::Reduction::Mean;
inline constexpr ddl::Reduction kSum = ddl::Reduction::Sum;
// Upsample's modes: UpsampleOptions().mode(torch::kBilinear). ddl has these two.
inline constexpr ddl::InterpolateMode kNearest = ddl::InterpolateMode::Nearest;
inline constexpr ddl::InterpolateMode kBilinear = ddl::InterpolateMode::Bilinear;

// Factories and ops with LibTorch's names and arguments (docs/libtorch.md, "Tensors"). The
// factories are autograd's, which return a Variable and honour requires_grad:
// torch::randn({2, 3}, torch::requires_grad()).
using ddl::cat;
using ddl::device;
using ddl::dtype;
using ddl::randint;
using ddl::randperm;
using ddl::requires_grad;
using ddl::stack;
using ddl::TensorOptions;
using ddl::autograd::arange;
using ddl::autograd::empty;
using ddl::autograd::empty_like;
using ddl::autograd::eye;
using ddl::autograd::full;
using ddl::autograd::full_like;
using ddl::autograd::linspace;
using ddl::autograd::ones;
using ddl::autograd::ones_like;
using ddl::autograd::rand;
using ddl::autograd::rand_like;
using ddl::autograd::randn;
using ddl::autograd::randn_like;
using ddl::autograd::tensor;
using ddl::autograd::zeros;
using ddl::autograd::zeros_like;

using ddl::exp;
using ddl::log;
using ddl::log_softmax;
using ddl::matmul;
using ddl::relu;
using ddl::sigmoid;
using ddl::softmax;
using ddl::tanh;

namespace cuda {
using ddl::cuda::device_count;
using ddl::cuda::is_available;
}  // namespace cuda

namespace nn {

using ddl::nn::Module;
template <typename Contained>
using ModuleHolder = ddl::nn::ModuleHolder<Contained>;
namespace functional = ddl::nn::functional;

using ddl::nn::AdaptiveAvgPool1dOptions;
using ddl::nn::AdaptiveAvgPool2dOptions;
using ddl::nn::AdaptiveAvgPool3dOptions;
using ddl::nn::AdaptiveMaxPool1dOptions;
using ddl::nn::AdaptiveMaxPool2dOptions;
using ddl::nn::AdaptiveMaxPool3dOptions;
using ddl::nn::AlphaDropoutOptions;
using ddl::nn::AvgPool1dOptions;
using ddl::nn::AvgPool2dOptions;
using ddl::nn::AvgPool3dOptions;
using ddl::nn::BatchNorm1dOptions;
using ddl::nn::BatchNorm2dOptions;
using ddl::nn::BatchNorm3dOptions;
using ddl::nn::BatchNormOptions;
using ddl::nn::BilinearOptions;
using ddl::nn::CELUOptions;
using ddl::nn::ConstantPad1dOptions;
using ddl::nn::ConstantPad2dOptions;
using ddl::nn::ConstantPad3dOptions;
using ddl::nn::Conv1dOptions;
using ddl::nn::Conv2dOptions;
using ddl::nn::Conv3dOptions;
using ddl::nn::ConvTranspose1dOptions;
using ddl::nn::ConvTranspose2dOptions;
using ddl::nn::ConvTranspose3dOptions;
using ddl::nn::CrossEntropyLossOptions;
using ddl::nn::CTCLossOptions;
using ddl::nn::Dropout2dOptions;
using ddl::nn::Dropout3dOptions;
using ddl::nn::DropoutOptions;
using ddl::nn::ELUOptions;
using ddl::nn::EmbeddingBagOptions;
using ddl::nn::EmbeddingOptions;
using ddl::nn::FeatureAlphaDropoutOptions;
using ddl::nn::FlattenOptions;
using ddl::nn::FoldOptions;
using ddl::nn::GaussianNLLLossOptions;
using ddl::nn::GLUOptions;
using ddl::nn::GroupNormOptions;
using ddl::nn::GRUCellOptions;
using ddl::nn::GRUOptions;
using ddl::nn::HardshrinkOptions;
using ddl::nn::HardtanhOptions;
using ddl::nn::InstanceNorm1dOptions;
using ddl::nn::InstanceNorm2dOptions;
using ddl::nn::InstanceNorm3dOptions;
using ddl::nn::LayerNormOptions;
using ddl::nn::LeakyReLUOptions;
using ddl::nn::LinearOptions;
using ddl::nn::LocalResponseNormOptions;
using ddl::nn::LogSoftmaxOptions;
using ddl::nn::LPPool1dOptions;
using ddl::nn::LPPool2dOptions;
using ddl::nn::LSTMCellOptions;
using ddl::nn::LSTMOptions;
using ddl::nn::MaxPool1dOptions;
using ddl::nn::MaxPool2dOptions;
using ddl::nn::MaxPool3dOptions;
using ddl::nn::MaxUnpool1dOptions;
using ddl::nn::MaxUnpool2dOptions;
using ddl::nn::MaxUnpool3dOptions;
using ddl::nn::MultiheadAttentionOptions;
using ddl::nn::MultiMarginLossOptions;
using ddl::nn::NLLLossOptions;
using ddl::nn::PixelShuffleOptions;
using ddl::nn::PixelUnshuffleOptions;
using ddl::nn::PoissonNLLLossOptions;
using ddl::nn::PReLUOptions;
using ddl::nn::ReflectionPad1dOptions;
using ddl::nn::ReflectionPad2dOptions;
using ddl::nn::ReflectionPad3dOptions;
using ddl::nn::ReplicationPad1dOptions;
using ddl::nn::ReplicationPad2dOptions;
using ddl::nn::ReplicationPad3dOptions;
using ddl::nn::RNNCellOptions;
using ddl::nn::RNNOptions;
using ddl::nn::RReLUOptions;
using ddl::nn::SoftmaxOptions;
using ddl::nn::SoftminOptions;
using ddl::nn::SoftshrinkOptions;
using ddl::nn::ThresholdOptions;
using ddl::nn::TransformerDecoderLayerOptions;
using ddl::nn::TransformerEncoderLayerOptions;
using ddl::nn::TransformerEncoderOptions;
using ddl::nn::TransformerOptions;
using ddl::nn::TripletMarginLossOptions;
using ddl::nn::UnflattenOptions;
using ddl::nn::UnfoldOptions;
using ddl::nn::UpsampleOptions;
using ddl::nn::ZeroPad2dOptions;

// Each layer as LibTorch has it: the holder `Linear` of the module class `LinearImpl`
// (ddl's nn::Linear).
using IdentityImpl = ddl::nn::Identity;
DDL_MODULE(Identity);
using SigmoidImpl = ddl::nn::Sigmoid;
DDL_MODULE(Sigmoid);
using TanhImpl = ddl::nn::Tanh;
DDL_MODULE(Tanh);
using GELUImpl = ddl::nn::GELU;
DDL_MODULE(GELU);
using SiLUImpl = ddl::nn::SiLU;
DDL_MODULE(SiLU);
using LeakyReLUImpl = ddl::nn::LeakyReLU;
DDL_MODULE(LeakyReLU);
using SoftmaxImpl = ddl::nn::Softmax;
DDL_MODULE(Softmax);
using LogSoftmaxImpl = ddl::nn::LogSoftmax;
DDL_MODULE(LogSoftmax);
using ELUImpl = ddl::nn::ELU;
DDL_MODULE(ELU);
using CELUImpl = ddl::nn::CELU;
DDL_MODULE(CELU);
using GLUImpl = ddl::nn::GLU;
DDL_MODULE(GLU);
using HardtanhImpl = ddl::nn::Hardtanh;
DDL_MODULE(Hardtanh);
using HardshrinkImpl = ddl::nn::Hardshrink;
DDL_MODULE(Hardshrink);
using SoftshrinkImpl = ddl::nn::Softshrink;
DDL_MODULE(Softshrink);
using ThresholdImpl = ddl::nn::Threshold;
DDL_MODULE(Threshold);
using PReLUImpl = ddl::nn::PReLU;
DDL_MODULE(PReLU);
using RReLUImpl = ddl::nn::RReLU;
DDL_MODULE(RReLU);
using SoftminImpl = ddl::nn::Softmin;
DDL_MODULE(Softmin);
using UnflattenImpl = ddl::nn::Unflatten;
DDL_MODULE(Unflatten);
using PixelShuffleImpl = ddl::nn::PixelShuffle;
DDL_MODULE(PixelShuffle);
using PixelUnshuffleImpl = ddl::nn::PixelUnshuffle;
DDL_MODULE(PixelUnshuffle);
using SELUImpl = ddl::nn::SELU;
DDL_MODULE(SELU);
using ReLU6Impl = ddl::nn::ReLU6;
DDL_MODULE(ReLU6);
using TanhshrinkImpl = ddl::nn::Tanhshrink;
DDL_MODULE(Tanhshrink);
using LogSigmoidImpl = ddl::nn::LogSigmoid;
DDL_MODULE(LogSigmoid);
using SoftsignImpl = ddl::nn::Softsign;
DDL_MODULE(Softsign);
using MishImpl = ddl::nn::Mish;
DDL_MODULE(Mish);
using HardswishImpl = ddl::nn::Hardswish;
DDL_MODULE(Hardswish);
using HardsigmoidImpl = ddl::nn::Hardsigmoid;
DDL_MODULE(Hardsigmoid);
using MultiheadAttentionImpl = ddl::nn::MultiheadAttention;
DDL_MODULE(MultiheadAttention);
using ModuleListImpl = ddl::nn::ModuleList;
DDL_MODULE(ModuleList);
using ModuleDictImpl = ddl::nn::ModuleDict;
DDL_MODULE(ModuleDict);
using SequentialImpl = ddl::nn::Sequential;
DDL_MODULE(Sequential);
using LinearImpl = ddl::nn::Linear;
DDL_MODULE(Linear);
using Conv1dImpl = ddl::nn::Conv1d;
DDL_MODULE(Conv1d);
using Conv2dImpl = ddl::nn::Conv2d;
DDL_MODULE(Conv2d);
using ConvTranspose2dImpl = ddl::nn::ConvTranspose2d;
DDL_MODULE(ConvTranspose2d);
using EmbeddingImpl = ddl::nn::Embedding;
DDL_MODULE(Embedding);
using BatchNorm1dImpl = ddl::nn::BatchNorm1d;
DDL_MODULE(BatchNorm1d);
using BatchNorm2dImpl = ddl::nn::BatchNorm2d;
DDL_MODULE(BatchNorm2d);
using LayerNormImpl = ddl::nn::LayerNorm;
DDL_MODULE(LayerNorm);
using GroupNormImpl = ddl::nn::GroupNorm;
DDL_MODULE(GroupNorm);
using ReLUImpl = ddl::nn::ReLU;
DDL_MODULE(ReLU);
using MaxPool2dImpl = ddl::nn::MaxPool2d;
DDL_MODULE(MaxPool2d);
using AvgPool2dImpl = ddl::nn::AvgPool2d;
DDL_MODULE(AvgPool2d);
using AdaptiveAvgPool2dImpl = ddl::nn::AdaptiveAvgPool2d;
DDL_MODULE(AdaptiveAvgPool2d);
using AdaptiveMaxPool2dImpl = ddl::nn::AdaptiveMaxPool2d;
DDL_MODULE(AdaptiveMaxPool2d);
using UpsampleImpl = ddl::nn::Upsample;
DDL_MODULE(Upsample);
using DropoutImpl = ddl::nn::Dropout;
DDL_MODULE(Dropout);
using FlattenImpl = ddl::nn::Flatten;
DDL_MODULE(Flatten);
using LSTMImpl = ddl::nn::LSTM;
DDL_MODULE(LSTM);
using GRUImpl = ddl::nn::GRU;
DDL_MODULE(GRU);
using LSTMCellImpl = ddl::nn::LSTMCell;
DDL_MODULE(LSTMCell);
using GRUCellImpl = ddl::nn::GRUCell;
DDL_MODULE(GRUCell);
using TransformerEncoderLayerImpl = ddl::nn::TransformerEncoderLayer;
DDL_MODULE(TransformerEncoderLayer);
using TransformerEncoderImpl = ddl::nn::TransformerEncoder;
DDL_MODULE(TransformerEncoder);
using CrossEntropyLossImpl = ddl::nn::CrossEntropyLoss;
DDL_MODULE(CrossEntropyLoss);
using MSELossImpl = ddl::nn::MSELoss;
DDL_MODULE(MSELoss);
using NLLLossImpl = ddl::nn::NLLLoss;
DDL_MODULE(NLLLoss);
using L1LossImpl = ddl::nn::L1Loss;
DDL_MODULE(L1Loss);
using SmoothL1LossImpl = ddl::nn::SmoothL1Loss;
DDL_MODULE(SmoothL1Loss);
using HuberLossImpl = ddl::nn::HuberLoss;
DDL_MODULE(HuberLoss);
using BCELossImpl = ddl::nn::BCELoss;
DDL_MODULE(BCELoss);
using BCEWithLogitsLossImpl = ddl::nn::BCEWithLogitsLoss;
DDL_MODULE(BCEWithLogitsLoss);
using KLDivLossImpl = ddl::nn::KLDivLoss;
DDL_MODULE(KLDivLoss);
using MarginRankingLossImpl = ddl::nn::MarginRankingLoss;
DDL_MODULE(MarginRankingLoss);
using HingeEmbeddingLossImpl = ddl::nn::HingeEmbeddingLoss;
DDL_MODULE(HingeEmbeddingLoss);
using SoftMarginLossImpl = ddl::nn::SoftMarginLoss;
DDL_MODULE(SoftMarginLoss);
using MultiLabelSoftMarginLossImpl = ddl::nn::MultiLabelSoftMarginLoss;
DDL_MODULE(MultiLabelSoftMarginLoss);
using MultiMarginLossImpl = ddl::nn::MultiMarginLoss;
DDL_MODULE(MultiMarginLoss);
using MultiLabelMarginLossImpl = ddl::nn::MultiLabelMarginLoss;
DDL_MODULE(MultiLabelMarginLoss);
using CosineEmbeddingLossImpl = ddl::nn::CosineEmbeddingLoss;
DDL_MODULE(CosineEmbeddingLoss);
using TripletMarginLossImpl = ddl::nn::TripletMarginLoss;
DDL_MODULE(TripletMarginLoss);
using PoissonNLLLossImpl = ddl::nn::PoissonNLLLoss;
DDL_MODULE(PoissonNLLLoss);
using GaussianNLLLossImpl = ddl::nn::GaussianNLLLoss;
DDL_MODULE(GaussianNLLLoss);
using CTCLossImpl = ddl::nn::CTCLoss;
DDL_MODULE(CTCLoss);
using Conv3dImpl = ddl::nn::Conv3d;
DDL_MODULE(Conv3d);
using ConvTranspose1dImpl = ddl::nn::ConvTranspose1d;
DDL_MODULE(ConvTranspose1d);
using ConvTranspose3dImpl = ddl::nn::ConvTranspose3d;
DDL_MODULE(ConvTranspose3d);
using MaxPool1dImpl = ddl::nn::MaxPool1d;
DDL_MODULE(MaxPool1d);
using MaxPool3dImpl = ddl::nn::MaxPool3d;
DDL_MODULE(MaxPool3d);
using AvgPool1dImpl = ddl::nn::AvgPool1d;
DDL_MODULE(AvgPool1d);
using AvgPool3dImpl = ddl::nn::AvgPool3d;
DDL_MODULE(AvgPool3d);
using AdaptiveAvgPool1dImpl = ddl::nn::AdaptiveAvgPool1d;
DDL_MODULE(AdaptiveAvgPool1d);
using AdaptiveAvgPool3dImpl = ddl::nn::AdaptiveAvgPool3d;
DDL_MODULE(AdaptiveAvgPool3d);
using AdaptiveMaxPool1dImpl = ddl::nn::AdaptiveMaxPool1d;
DDL_MODULE(AdaptiveMaxPool1d);
using AdaptiveMaxPool3dImpl = ddl::nn::AdaptiveMaxPool3d;
DDL_MODULE(AdaptiveMaxPool3d);
using LPPool1dImpl = ddl::nn::LPPool1d;
DDL_MODULE(LPPool1d);
using LPPool2dImpl = ddl::nn::LPPool2d;
DDL_MODULE(LPPool2d);
using MaxUnpool1dImpl = ddl::nn::MaxUnpool1d;
DDL_MODULE(MaxUnpool1d);
using MaxUnpool2dImpl = ddl::nn::MaxUnpool2d;
DDL_MODULE(MaxUnpool2d);
using MaxUnpool3dImpl = ddl::nn::MaxUnpool3d;
DDL_MODULE(MaxUnpool3d);
using BatchNorm3dImpl = ddl::nn::BatchNorm3d;
DDL_MODULE(BatchNorm3d);
using InstanceNorm1dImpl = ddl::nn::InstanceNorm1d;
DDL_MODULE(InstanceNorm1d);
using InstanceNorm2dImpl = ddl::nn::InstanceNorm2d;
DDL_MODULE(InstanceNorm2d);
using InstanceNorm3dImpl = ddl::nn::InstanceNorm3d;
DDL_MODULE(InstanceNorm3d);
using LocalResponseNormImpl = ddl::nn::LocalResponseNorm;
DDL_MODULE(LocalResponseNorm);
using Dropout1dImpl = ddl::nn::Dropout1d;
DDL_MODULE(Dropout1d);
using Dropout2dImpl = ddl::nn::Dropout2d;
DDL_MODULE(Dropout2d);
using Dropout3dImpl = ddl::nn::Dropout3d;
DDL_MODULE(Dropout3d);
using AlphaDropoutImpl = ddl::nn::AlphaDropout;
DDL_MODULE(AlphaDropout);
using FeatureAlphaDropoutImpl = ddl::nn::FeatureAlphaDropout;
DDL_MODULE(FeatureAlphaDropout);
using ReflectionPad1dImpl = ddl::nn::ReflectionPad1d;
DDL_MODULE(ReflectionPad1d);
using ReflectionPad2dImpl = ddl::nn::ReflectionPad2d;
DDL_MODULE(ReflectionPad2d);
using ReflectionPad3dImpl = ddl::nn::ReflectionPad3d;
DDL_MODULE(ReflectionPad3d);
using ReplicationPad1dImpl = ddl::nn::ReplicationPad1d;
DDL_MODULE(ReplicationPad1d);
using ReplicationPad2dImpl = ddl::nn::ReplicationPad2d;
DDL_MODULE(ReplicationPad2d);
using ReplicationPad3dImpl = ddl::nn::ReplicationPad3d;
DDL_MODULE(ReplicationPad3d);
using ZeroPad2dImpl = ddl::nn::ZeroPad2d;
DDL_MODULE(ZeroPad2d);
using ConstantPad1dImpl = ddl::nn::ConstantPad1d;
DDL_MODULE(ConstantPad1d);
using ConstantPad2dImpl = ddl::nn::ConstantPad2d;
DDL_MODULE(ConstantPad2d);
using ConstantPad3dImpl = ddl::nn::ConstantPad3d;
DDL_MODULE(ConstantPad3d);
using FoldImpl = ddl::nn::Fold;
DDL_MODULE(Fold);
using UnfoldImpl = ddl::nn::Unfold;
DDL_MODULE(Unfold);
using BilinearImpl = ddl::nn::Bilinear;
DDL_MODULE(Bilinear);
using EmbeddingBagImpl = ddl::nn::EmbeddingBag;
DDL_MODULE(EmbeddingBag);
using RNNImpl = ddl::nn::RNN;
DDL_MODULE(RNN);
using RNNCellImpl = ddl::nn::RNNCell;
DDL_MODULE(RNNCell);
using TransformerDecoderLayerImpl = ddl::nn::TransformerDecoderLayer;
DDL_MODULE(TransformerDecoderLayer);
using TransformerDecoderImpl = ddl::nn::TransformerDecoder;
DDL_MODULE(TransformerDecoder);
using TransformerImpl = ddl::nn::Transformer;
DDL_MODULE(Transformer);

}  // namespace nn

namespace optim {
using ddl::optim::Adagrad;
using ddl::optim::AdagradOptions;
using ddl::optim::Adam;
using ddl::optim::Adamax;
using ddl::optim::AdamaxOptions;
using ddl::optim::AdamOptions;
using ddl::optim::AdamW;
using ddl::optim::AdamWOptions;
using ddl::optim::ASGD;
using ddl::optim::ASGDOptions;
using ddl::optim::LBFGS;
using ddl::optim::LBFGSOptions;
using ddl::optim::NAdam;
using ddl::optim::NAdamOptions;
using ddl::optim::Optimizer;
using ddl::optim::RAdam;
using ddl::optim::RAdamOptions;
using ddl::optim::RMSprop;
using ddl::optim::RMSpropOptions;
using ddl::optim::Rprop;
using ddl::optim::RpropOptions;
using ddl::optim::SGD;
using ddl::optim::SGDOptions;
using ddl::optim::StepLR;
}  // namespace optim

namespace data {
using ddl::data::DataLoaderOptions;
}  // namespace data

}  // namespace torch
