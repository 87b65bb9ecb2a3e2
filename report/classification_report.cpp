// Confusion matrix and scikit-learn style classification report. Every class in
// [0, num_classes) is reported, as scikit-learn does when given labels=range(C).
#include <algorithm>
#include <cstdio>

#include <ddl/dist/process_group.h>
#include <ddl/report/classification_report.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::report {
namespace {

double ratio(int64_t num, int64_t den) { return den > 0 ? static_cast<double>(num) / den : 0.0; }

std::string right(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

ConfusionMatrix::ConfusionMatrix(int num_classes, std::vector<std::string> class_names)
    : num_classes_(num_classes), names_(std::move(class_names)) {
  DDL_CHECK(num_classes > 0, "ConfusionMatrix: num_classes must be positive, got ", num_classes);
  DDL_CHECK(names_.empty() || static_cast<int>(names_.size()) == num_classes, "ConfusionMatrix: ", names_.size(),
            " class names for ", num_classes, " classes");
  counts_.assign(static_cast<size_t>(num_classes) * num_classes, 0);
}

void ConfusionMatrix::add(int64_t predicted, int64_t target) {
  DDL_CHECK(predicted >= 0 && predicted < num_classes_ && target >= 0 && target < num_classes_,
            "ConfusionMatrix::add: labels must lie in [0, ", num_classes_, "), got predicted ", predicted,
            " and target ", target);
  ++counts_[static_cast<size_t>(target) * num_classes_ + predicted];
}

void ConfusionMatrix::add(const Tensor& predicted, const Tensor& target) {
  DDL_CHECK(predicted.defined() && target.defined(), "ConfusionMatrix::add: undefined tensor");
  DDL_CHECK(predicted.numel() == target.numel(), "ConfusionMatrix::add: predicted ", predicted.shape(), " and target ",
            target.shape(), " must have the same number of elements");
  auto p = to_vector<int64_t>(predicted.device().is_cpu() ? predicted : predicted.to(Device::cpu()));
  auto t = to_vector<int64_t>(target.device().is_cpu() ? target : target.to(Device::cpu()));
  for (size_t i = 0; i < p.size(); ++i) add(p[i], t[i]);
}

void ConfusionMatrix::add_counts(const Tensor& counts) {
  DDL_CHECK(counts.defined() && counts.numel() == static_cast<int64_t>(counts_.size()),
            "ConfusionMatrix::add_counts: expected [", num_classes_, ", ", num_classes_, "] counts, got ",
            counts.defined() ? counts.shape() : Shape{});
  auto c = to_vector<int64_t>(counts.device().is_cpu() ? counts : counts.to(Device::cpu()));
  for (size_t i = 0; i < c.size(); ++i) {
    DDL_CHECK(c[i] >= 0, "ConfusionMatrix::add_counts: negative count ", c[i]);
    counts_[i] += c[i];
  }
}

void ConfusionMatrix::merge(const ConfusionMatrix& other) {
  DDL_CHECK(other.num_classes_ == num_classes_, "ConfusionMatrix::merge: ", other.num_classes_, " classes into ",
            num_classes_);
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

void ConfusionMatrix::all_reduce(dist::ProcessGroup* pg) {
  if (pg == nullptr || pg->size() == 1) return;
  Tensor t = to_tensor();
  pg->all_reduce(t, dist::ReduceOp::Sum);
  counts_ = to_vector<int64_t>(t);
}

void ConfusionMatrix::reset() { std::fill(counts_.begin(), counts_.end(), 0); }

std::string ConfusionMatrix::class_name(int c) const {
  return names_.empty() ? std::to_string(c) : names_[static_cast<size_t>(c)];
}

int64_t ConfusionMatrix::total() const {
  int64_t n = 0;
  for (int64_t c : counts_) n += c;
  return n;
}

int64_t ConfusionMatrix::correct() const {
  int64_t n = 0;
  for (int c = 0; c < num_classes_; ++c) n += count(c, c);
  return n;
}

double ConfusionMatrix::accuracy() const { return ratio(correct(), total()); }

Tensor ConfusionMatrix::to_tensor() const { return from_vector(counts_, Shape{num_classes_, num_classes_}); }

ClassificationReport classification_report(const ConfusionMatrix& cm) {
  const int n = cm.num_classes();
  ClassificationReport r;
  r.total = cm.total();
  r.accuracy = cm.accuracy();
  for (int c = 0; c < n; ++c) {
    int64_t tp = cm.count(c, c), predicted = 0, actual = 0;
    for (int k = 0; k < n; ++k) {
      predicted += cm.count(k, c);
      actual += cm.count(c, k);
    }
    ClassScores s;
    s.precision = ratio(tp, predicted);  // zero_division = 0
    s.recall = ratio(tp, actual);
    s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
    s.support = actual;
    r.names.push_back(cm.class_name(c));
    r.classes.push_back(s);
    r.macro_avg.precision += s.precision / n;
    r.macro_avg.recall += s.recall / n;
    r.macro_avg.f1 += s.f1 / n;
    if (r.total > 0) {
      double w = static_cast<double>(actual) / r.total;
      r.weighted_avg.precision += w * s.precision;
      r.weighted_avg.recall += w * s.recall;
      r.weighted_avg.f1 += w * s.f1;
    }
  }
  r.macro_avg.support = r.weighted_avg.support = r.total;
  return r;
}

std::string ClassificationReport::to_string(int digits) const {
  // Widths as in scikit-learn: names right-aligned to the longest, numbers in 9 columns.
  size_t width = std::max<size_t>(12, static_cast<size_t>(digits));  // len("weighted avg")
  for (const auto& name : names) width = std::max(width, name.size());
  auto row = [&](const std::string& head, const ClassScores& s) {
    return right(head, width) + " " + " " + right(fixed(s.precision, digits), 9) + " " +
           right(fixed(s.recall, digits), 9) + " " + right(fixed(s.f1, digits), 9) + " " +
           right(std::to_string(s.support), 9) + "\n";
  };
  std::string out = right("", width) + " " + " " + right("precision", 9) + " " + right("recall", 9) + " " +
                    right("f1-score", 9) + " " + right("support", 9) + "\n\n";
  for (size_t c = 0; c < classes.size(); ++c) out += row(names[c], classes[c]);
  out += "\n";
  out += right("accuracy", width) + " " + " " + right("", 9) + " " + right("", 9) + " " +
         right(fixed(accuracy, digits), 9) + " " + right(std::to_string(total), 9) + "\n";
  out += row("macro avg", macro_avg);
  out += row("weighted avg", weighted_avg);
  return out;
}

std::string format_confusion_matrix(const ConfusionMatrix& cm) {
  const int n = cm.num_classes();
  int64_t largest = 0;
  for (int t = 0; t < n; ++t)
    for (int p = 0; p < n; ++p) largest = std::max(largest, cm.count(t, p));
  size_t cell = std::max(std::to_string(largest).size(), std::to_string(n - 1).size()) + 2;
  size_t support_cell = std::max<size_t>(std::to_string(cm.total()).size(), 5) + 2;  // "total"
  const std::string corner = "true \\ pred";
  std::vector<std::string> labels;  // "3 cat", or "3" without names
  size_t label = corner.size();
  for (int c = 0; c < n; ++c) {
    std::string name = cm.class_name(c), idx = std::to_string(c);
    labels.push_back(name == idx ? idx : idx + " " + name);
    label = std::max(label, labels.back().size());
  }
  auto left = [&](const std::string& s) { return s + std::string(label - s.size(), ' '); };
  std::string out = left(corner);
  for (int p = 0; p < n; ++p) out += right(std::to_string(p), cell);
  out += right("total", support_cell) + "\n";
  for (int t = 0; t < n; ++t) {
    out += left(labels[static_cast<size_t>(t)]);
    int64_t row_total = 0;
    for (int p = 0; p < n; ++p) {
      out += right(std::to_string(cm.count(t, p)), cell);
      row_total += cm.count(t, p);
    }
    out += right(std::to_string(row_total), support_cell) + "\n";
  }
  out += left("total");  // how often each class was predicted
  for (int p = 0; p < n; ++p) {
    int64_t col_total = 0;
    for (int t = 0; t < n; ++t) col_total += cm.count(t, p);
    out += right(std::to_string(col_total), cell);
  }
  out += right(std::to_string(cm.total()), support_cell) + "\n";
  return out;
}

}  // namespace ddl::report
