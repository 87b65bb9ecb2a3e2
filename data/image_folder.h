// ImageFolder: root/<class>/**/<image> decoded with libjpeg-turbo (JPEG) or stb_image
// (PNG, BMP, TGA, GIF, PNM, PSD). Classes are the sub-folders of root sorted by name and
// numbered from 0 (or a given class list, so a test split numbers as its training split); files are listed once, sorted
// by path, and decoded on every get() (nothing is cached), into uint8 [channels, H, W].
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <ddl/data/dataset.h>

namespace ddl::data {

struct ImageFolderOptions {
  int64_t channels = 3;       // 1 (grey), 3 (RGB) or 4 (RGBA); stb converts
  int64_t resize_height = 0;  // both > 0: every image is resized (bilinear) before the transform
  int64_t resize_width = 0;
  // Lower-case file extensions that count as images.
  std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".gif", ".ppm", ".pgm", ".psd"};
  // The class list, e.g. the training split's classes() for its test split: sub-folders are
  // numbered by their place in it (a split may lack some classes), and a sub-folder not in
  // it is an error. Empty: the sub-folders themselves, sorted by name.
  std::vector<std::string> classes;
  // Images larger than this (width x height) are refused before decoding: a small file can
  // claim a huge image (a 100 KB PNG of 12000x12000 decodes into 432 MB of RGB).
  int64_t max_pixels = kDefaultMaxPixels;
  static constexpr int64_t kDefaultMaxPixels = int64_t{1} << 26;  // 67 M: 8192 x 8192
};

class ImageFolder : public Dataset {
 public:
  // Throws ddl::Error when root is missing, holds no class folder, a class holds no image,
  // or (with options.classes) a sub-folder is not one of the classes.
  explicit ImageFolder(const std::string& root, Transform transform = {}, ImageFolderOptions options = {});
  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  const std::vector<std::string>& classes() const { return classes_; }
  // (path, class index) per example, in index order.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }

 protected:
  // Throws ddl::Error naming the file when it cannot be read or decoded.
  Example load(int64_t index) const override;

 private:
  std::vector<std::string> classes_;
  std::vector<std::pair<std::string, int64_t>> samples_;
  ImageFolderOptions options_;
};

// Decodes one image file to uint8 [channels, H, W] (libjpeg-turbo for JPEG, else stb_image).
// Throws ddl::Error naming the file, also when it claims more than max_pixels pixels
// (checked from the header, before decoding) or a JPEG's data ends early.
Tensor read_image(const std::string& path, int64_t channels = 3,
                  int64_t max_pixels = ImageFolderOptions::kDefaultMaxPixels);

}  // namespace ddl::data
