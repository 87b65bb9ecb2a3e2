// Everything in optim/.
#pragma once

#include "optim/adam.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
#include "optim/state.h"
