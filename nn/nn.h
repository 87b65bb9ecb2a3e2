// Everything in nn/: modules, layers, init, models, checkpoints.
#pragma once

#include "nn/activation.h"
#include "nn/attention.h"
#include "nn/checkpoint.h"
#include "nn/container.h"
#include "nn/embedding.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/models/mlp.h"
#include "nn/models/resnet.h"
#include "nn/models/vgg.h"
#include "nn/module.h"
#include "nn/normalization.h"
#include "nn/rnn.h"
#include "nn/safetensors.h"
#include "nn/transformer.h"
