// The data layer in one include: datasets, transforms, samplers, DataLoader.
// Depends on tensor/ only. See docs/data.md.
#pragma once

#include "data/cifar.h"
#include "data/dataloader.h"
#include "data/dataset.h"
#include "data/dataset_ops.h"
#include "data/image_folder.h"
#include "data/mnist.h"
#include "data/sampler.h"
#include "data/stream.h"
#include "data/synthetic.h"
#include "data/transforms.h"
