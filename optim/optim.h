// Everything in optim/.
#pragma once

#include <ddl/optim/adagrad.h>
#include <ddl/optim/adam.h>
#include <ddl/optim/lbfgs.h>
#include <ddl/optim/loss_scaler.h>
#include <ddl/optim/lr_scheduler.h>
#include <ddl/optim/one_cycle.h>
#include <ddl/optim/optimizer.h>
#include <ddl/optim/plateau.h>
#include <ddl/optim/rmsprop.h>
#include <ddl/optim/sgd.h>
#include <ddl/optim/state.h>
