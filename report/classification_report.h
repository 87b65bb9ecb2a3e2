// Evaluation reports: a confusion matrix accumulated over batches, and from it per-class
// precision / recall / F1 / support, accuracy, macro and support-weighted averages,
// printed as scikit-learn's classification_report prints them. A class never predicted
// has precision 0 (as scikit-learn's zero_division=0), never NaN.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl::dist {
class ProcessGroup;
}

namespace ddl::report {

inline const std::vector<std::string> kCifar10ClassNames = {"airplane", "automobile", "bird",  "cat",  "deer",
                                                            "dog",      "frog",       "horse", "ship", "truck"};
inline const std::vector<std::string> kFashionMnistClassNames = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
inline const std::vector<std::string> kMnistClassNames = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

class ConfusionMatrix {
 public:
  // class_names: empty (classes print as 0, 1, ...) or one per class.
  explicit ConfusionMatrix(int num_classes, std::vector<std::string> class_names = {});

  // predicted, target: integer tensors (any device, any shape) of equal numel with values
  // in [0, num_classes). Adds one count per element at [target][predicted].
  void add(const Tensor& predicted, const Tensor& target);
  void add(int64_t predicted, int64_t target);
  // Adds counts already tallied elsewhere: integer [num_classes, num_classes], rows = true class.
  void add_counts(const Tensor& counts);
  // Adds another matrix of the same size (other shards of the test set).
  void merge(const ConfusionMatrix& other);
  // Sums the matrix over all ranks (a collective: every rank calls it). Null pg: no-op.
  void all_reduce(dist::ProcessGroup* pg);
  void reset();

  int num_classes() const { return num_classes_; }
  // "3" when no names were given.
  std::string class_name(int c) const;
  int64_t count(int true_class, int predicted_class) const {
    return counts_[static_cast<size_t>(true_class) * num_classes_ + predicted_class];
  }
  int64_t total() const;
  int64_t correct() const;
  double accuracy() const;  // 0 when empty
  // int64 [num_classes, num_classes], rows = true class, columns = predicted.
  Tensor to_tensor() const;

 private:
  int num_classes_;
  std::vector<std::string> names_;
  std::vector<int64_t> counts_;
};

struct ClassScores {
  double precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;
};

struct ClassificationReport {
  std::vector<std::string> names;
  std::vector<ClassScores> classes;
  ClassScores macro_avg, weighted_avg;  // support: the total
  double accuracy = 0;
  int64_t total = 0;
  // scikit-learn's layout: header, one row per class, blank line, accuracy, macro avg,
  // weighted avg; `digits` decimals (scikit-learn's default is 2; 3 here).
  std::string to_string(int digits = 3) const;
};

ClassificationReport classification_report(const ConfusionMatrix& cm);

// The matrix as an aligned table: rows "index name" are true classes, columns predicted
// class indices, with row totals (the support) at the right.
std::string format_confusion_matrix(const ConfusionMatrix& cm);

}  // namespace ddl::report
