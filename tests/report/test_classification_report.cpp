// ConfusionMatrix and classification_report against a hand-computed 3-class case in
// which class 2 is never predicted (precision 0, not NaN), the exact scikit-learn text
// layout, the aligned confusion table with class names, and argument errors.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/report/classification_report.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::report;

namespace {

// Rows = true class: [[2, 1, 0], [1, 1, 0], [1, 1, 0]], fed as two batches.
ConfusionMatrix hand_case(std::vector<std::string> names = {}) {
  ConfusionMatrix cm(3, std::move(names));
  cm.add(from_vector<int64_t>({0, 0, 1, 0}), from_vector<int64_t>({0, 0, 0, 1}));
  cm.add(from_vector<int64_t>({1, 0, 1}, Shape{3, 1}), from_vector<int64_t>({1, 2, 2}, Shape{3, 1}));
  return cm;
}

}  // namespace

TEST_CASE("ConfusionMatrix: counts accumulate across batches", "[apps]") {
  auto cm = hand_case();
  CHECK(cm.count(0, 0) == 2);
  CHECK(cm.count(0, 1) == 1);
  CHECK(cm.count(1, 0) == 1);
  CHECK(cm.count(2, 1) == 1);
  CHECK(cm.count(2, 2) == 0);
  CHECK(cm.total() == 7);
  CHECK(cm.correct() == 3);
  CHECK(cm.accuracy() == Approx(3.0 / 7));
  CHECK(to_vector<int64_t>(cm.to_tensor()) == std::vector<int64_t>{2, 1, 0, 1, 1, 0, 1, 1, 0});
  ConfusionMatrix tallied(3);
  tallied.add_counts(cm.to_tensor());
  CHECK(to_vector<int64_t>(tallied.to_tensor()) == to_vector<int64_t>(cm.to_tensor()));
  REQUIRE_THROWS_WITH(tallied.add_counts(from_vector<int64_t>({1, 2})), Catch::Contains("add_counts"));
  ConfusionMatrix twice = hand_case();
  twice.merge(cm);
  CHECK(twice.count(0, 0) == 4);
  twice.reset();
  CHECK(twice.total() == 0);
  CHECK(twice.accuracy() == 0);
}

TEST_CASE("classification_report: hand-computed precision, recall, F1, averages", "[apps]") {
  auto r = classification_report(hand_case());
  REQUIRE(r.classes.size() == 3);
  CHECK(r.classes[0].precision == Approx(0.5));
  CHECK(r.classes[0].recall == Approx(2.0 / 3));
  CHECK(r.classes[0].f1 == Approx(4.0 / 7));
  CHECK(r.classes[0].support == 3);
  CHECK(r.classes[1].precision == Approx(1.0 / 3));
  CHECK(r.classes[1].recall == Approx(0.5));
  CHECK(r.classes[1].f1 == Approx(0.4));
  // Class 2 is never predicted: precision 0 (scikit-learn's zero_division=0), no NaN.
  CHECK(r.classes[2].precision == 0);
  CHECK(r.classes[2].recall == 0);
  CHECK(r.classes[2].f1 == 0);
  CHECK(r.classes[2].support == 2);
  CHECK(r.accuracy == Approx(3.0 / 7));
  CHECK(r.macro_avg.precision == Approx((0.5 + 1.0 / 3) / 3));
  CHECK(r.macro_avg.recall == Approx((2.0 / 3 + 0.5) / 3));
  CHECK(r.macro_avg.f1 == Approx((4.0 / 7 + 0.4) / 3));
  CHECK(r.weighted_avg.precision == Approx((3 * 0.5 + 2.0 / 3) / 7));
  CHECK(r.weighted_avg.recall == Approx(3.0 / 7));
  CHECK(r.weighted_avg.f1 == Approx((3 * 4.0 / 7 + 2 * 0.4) / 7));
  CHECK(r.macro_avg.support == 7);

  // An empty matrix reports zeros, not NaN.
  auto empty = classification_report(ConfusionMatrix(2));
  CHECK(empty.accuracy == 0);
  CHECK(empty.weighted_avg.f1 == 0);
  CHECK_FALSE(std::isnan(empty.macro_avg.precision));
}

TEST_CASE("classification_report: scikit-learn's text layout", "[apps]") {
  // What sklearn.metrics.classification_report(y_true, y_pred, digits=2) prints for this case.
  const std::string expected =
      "              precision    recall  f1-score   support\n"
      "\n"
      "           0       0.50      0.67      0.57         3\n"
      "           1       0.33      0.50      0.40         2\n"
      "           2       0.00      0.00      0.00         2\n"
      "\n"
      "    accuracy                           0.43         7\n"
      "   macro avg       0.28      0.39      0.32         7\n"
      "weighted avg       0.31      0.43      0.36         7\n";
  CHECK(classification_report(hand_case()).to_string(2) == expected);

  // Long names widen the name column; the default is 3 digits.
  std::string named = classification_report(hand_case({"T-shirt/top", "Trouser", "Ankle boot/long"})).to_string();
  CHECK_THAT(named, Catch::Contains("Ankle boot/long      0.000     0.000     0.000         2\n"));
  CHECK_THAT(named, Catch::Contains("   weighted avg      0.310     0.429     0.359         7\n"));
}

TEST_CASE("format_confusion_matrix: aligned rows with names and totals", "[apps]") {
  ConfusionMatrix cm(3, {"cat", "dog", "horse"});
  for (int i = 0; i < 1234; ++i) cm.add(0, 0);
  cm.add(2, 1);
  cm.add(1, 2);
  const std::string expected =
      "true \\ pred     0     1     2  total\n"
      "0 cat        1234     0     0   1234\n"
      "1 dog           0     0     1      1\n"
      "2 horse         0     1     0      1\n"
      "total        1234     1     1   1236\n";
  CHECK(format_confusion_matrix(cm) == expected);
}

TEST_CASE("ConfusionMatrix: bad arguments name the call", "[apps]") {
  ConfusionMatrix cm(3);
  REQUIRE_THROWS_WITH(cm.add(3, 0), Catch::Contains("ConfusionMatrix::add") && Catch::Contains("[0, 3)"));
  REQUIRE_THROWS_WITH(cm.add(from_vector<int64_t>({0, 1}), from_vector<int64_t>({0})),
                      Catch::Contains("same number of elements"));
  REQUIRE_THROWS_WITH(ConfusionMatrix(2, {"a"}), Catch::Contains("1 class names for 2 classes"));
  REQUIRE_THROWS_AS(ConfusionMatrix(0), ddl::Error);
  CHECK(kCifar10ClassNames.size() == 10);
  CHECK(kFashionMnistClassNames[9] == "Ankle boot");
}
