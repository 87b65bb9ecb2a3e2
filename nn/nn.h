// Everything in nn/: modules, layers, init, models, checkpoints.
#pragma once

#include <ddl/nn/activation.h>
#include <ddl/nn/activation_more.h>
#include <ddl/nn/attention.h>
#include <ddl/nn/checkpoint.h>
#include <ddl/nn/container.h>
#include <ddl/nn/conv_layers.h>
#include <ddl/nn/embedding.h>
#include <ddl/nn/functional.h>
#include <ddl/nn/init.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/losses.h>
#include <ddl/nn/margin_losses.h>
#include <ddl/nn/models/mlp.h>
#include <ddl/nn/models/resnet.h>
#include <ddl/nn/models/vgg.h>
#include <ddl/nn/module.h>
#include <ddl/nn/normalization.h>
#include <ddl/nn/pool_layers.h>
#include <ddl/nn/rnn.h>
#include <ddl/nn/safetensors.h>
#include <ddl/nn/transformer.h>
