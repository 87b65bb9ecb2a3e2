// The data layer in one include: datasets, transforms, samplers, DataLoader.
// Depends on tensor/ only. See docs/data.md.
#pragma once

#include <ddl/data/cifar.h>
#include <ddl/data/dataloader.h>
#include <ddl/data/dataset.h>
#include <ddl/data/dataset_ops.h>
#include <ddl/data/image_folder.h>
#include <ddl/data/mnist.h>
#include <ddl/data/sampler.h>
#include <ddl/data/synthetic.h>
#include <ddl/data/transforms.h>
