// Everything in optim/.
#pragma once

#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adam_variants.h"
#include "optim/asgd.h"
#include "optim/lbfgs.h"
#include "optim/loss_scaler.h"
#include "optim/lr_scheduler.h"
#include "optim/one_cycle.h"
#include "optim/optimizer.h"
#include "optim/plateau.h"
#include "optim/rmsprop.h"
#include "optim/rprop.h"
#include "optim/sgd.h"
#include "optim/state.h"
