// A user's own training loop with the library's reporting (docs/report.md): a progress
// bar, step timing, resource sampling, JSON-lines metrics, a classification report, the
// per-rank table, the HTML report and a Chrome trace, each in a few lines. It trains a
// small MLP on synthetic data (4 classes, labels from a fixed random linear map; 2048
// samples to train on, 512 held out to test), one process, and writes into DIR:
//   build/apps/custom_training DIR   ->  DIR/metrics.jsonl, DIR/report.html, DIR/trace.json
// With SNAPSHOT it saves its whole state there after each epoch and, restarted, resumes
// from it (docs/fault_tolerance.md); EPOCHS (default 3) is where training ends:
//   build/apps/custom_training DIR SNAPSHOT [EPOCHS]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <ddl/ddl.h>
#include <ddl/ft/ft.h>
#include <ddl/report/classification_report.h>
#include <ddl/report/metrics_log.h>
#include <ddl/report/progress.h>
#include <ddl/report/rank_table.h>
#include <ddl/report/step_timer.h>
#include <ddl/report/training_report.h>
#include <ddl/trace/json_writer.h>
#include <ddl/trace/trace.h>

using namespace ddl;

int main(int argc, char** argv) try {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const std::string snapshot = argc > 2 ? argv[2] : "";
  const int64_t epochs = argc > 3 ? std::stoll(argv[3]) : 3;
  constexpr int64_t kClasses = 4, kFeatures = 16, kSamples = 2048, kTest = 512, kBatch = 64;
  const int64_t steps_per_epoch = kSamples / kBatch;
  Generator gen(0);
  const Tensor all_x = randn({kSamples + kTest, kFeatures}, gen);
  const Tensor all_y = argmax(matmul(all_x, randn({kFeatures, kClasses}, gen)), 1);  // a separable task
  const Tensor x = all_x.narrow(0, 0, kSamples), y = all_y.narrow(0, 0, kSamples);   // the training set
  const Tensor test_x = all_x.narrow(0, kSamples, kTest).contiguous(), test_y = all_y.narrow(0, kSamples, kTest);

  manual_seed(0);
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(kFeatures, 64), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(64, kClasses)});
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  // Fault tolerance: the model, the optimizer and where training stands (ft/ft.h).
  ft::State state{.model = model.get(), .optimizer = &opt, .position = {.batch_size = kBatch}};
  if (!snapshot.empty() && ft::resume(snapshot, state).resumed)
    std::cout << "resumed from " << snapshot << " at epoch " << state.position.epoch + 1 << "\n";

  trace::start();                   // the timeline
  report::ResourceSampler sampler;  // CPU, memory, I/O from /proc
  const auto start = std::chrono::steady_clock::now();
  report::MetricsLog log(dir + "/metrics.jsonl", /*rank=*/0, /*world=*/1);  // JSON lines
  report::StepTimer timer;                                                  // data / forward / backward / optimizer
  report::TrainingHistory history(steps_per_epoch);                         // for the HTML report
  for (int64_t epoch = state.position.epoch; epoch < epochs; ++epoch) {
    report::ProgressBar bar(steps_per_epoch, "epoch " + std::to_string(epoch + 1));
    timer.begin_epoch();
    double loss_sum = 0;
    int64_t correct = 0;
    for (int64_t step = 0; step < steps_per_epoch; ++step) {
      timer.start(report::Phase::Data);
      const Tensor xb = x.narrow(0, step * kBatch, kBatch).contiguous(), yb = y.narrow(0, step * kBatch, kBatch);
      timer.start(report::Phase::Forward);
      const Variable logits = model->forward(Variable(xb));
      const Variable loss = cross_entropy(logits, yb);
      timer.start(report::Phase::Backward);
      opt.zero_grad();
      loss.backward();
      timer.start(report::Phase::Optimizer);
      opt.step();
      const report::StepTimes t = timer.end_step();
      const int64_t ok = static_cast<int64_t>(sum(eq(argmax(logits.data(), 1), yb).to(DType::Int64)).item());
      const double acc_pct = 100.0 * double(ok) / kBatch;
      loss_sum += loss.item(), correct += ok;
      log.step(epoch, step, t, {{"loss", loss.item()}, {"accuracy_pct", acc_pct}, {"lr", 0.1}});
      history.step(epoch, step, loss.item(), acc_pct, 0.1);
      bar.update(step + 1, report::format_train_status(loss.item(), kBatch / t.total_s, NAN));
    }
    const report::EpochTimes e = timer.end_epoch();
    const double train_acc = 100.0 * double(correct) / double(kSamples);
    log.epoch(epoch, e, {{"train_loss", loss_sum / steps_per_epoch}, {"train_accuracy_pct", train_acc}});
    history.epoch(epoch, loss_sum / steps_per_epoch, train_acc);
    char line[96];
    std::snprintf(line, sizeof line, "epoch %lld: train loss %.4f, train accuracy %.2f%%", (long long)epoch + 1,
                  loss_sum / steps_per_epoch, train_acc);
    bar.println(line);
    state.position.epoch = epoch + 1, state.position.global_step += steps_per_epoch;
    if (!snapshot.empty()) ft::save(snapshot, state);  // atomic: a crash keeps the last whole one
  }

  // Evaluation on the held-out samples: a confusion matrix and its report.
  report::ConfusionMatrix cm(kClasses);
  const Variable test_logits = model->forward(Variable(test_x));
  cm.add(argmax(test_logits.data(), 1), test_y);
  const double test_loss = cross_entropy(test_logits, test_y).item();
  std::cout << report::classification_report(cm).to_string();
  log.write("eval", {{"epoch", epochs - 1},
                     {"test_loss", test_loss},
                     {"test_accuracy_pct", 100 * cm.accuracy()},
                     {"test_images", cm.total()}});
  history.eval(epochs - 1, test_loss, 100 * cm.accuracy());

  // The per-rank table (one rank here; under ddlrun gather_rank_summaries collects all).
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const report::RankSummary mine =
      report::make_rank_summary(sampler.summary(), timer.run(), nullptr, NAN, 100 * cm.accuracy(), wall_s);
  std::cout << report::format_rank_table({mine});

  report::TrainingReportInputs in;
  in.title = "custom_training: an MLP on synthetic data";
  in.settings = {{"model", "MLP 16-64-4"}, {"samples", std::to_string(kSamples)}, {"batch", std::to_string(kBatch)}};
  in.history = &history;
  in.ranks = {mine};
  in.confusion = &cm;
  report::training_report(in).write(dir + "/report.html");
  trace::write_file(dir + "/trace.json");  // stops the recording
  std::cout << "wrote " << dir << "/metrics.jsonl, report.html and trace.json\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "custom_training: error: " << e.what() << "\n";
  return 1;
}
