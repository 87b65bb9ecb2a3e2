// JPEG through libjpeg-turbo (see jpeg_decode.h). Debian's stb_image 2.27 reads out of
// bounds on crafted JPEG Huffman data (found by tests/fuzz/fuzz_image), so JPEGs no longer
// reach stb. Error handling follows libjpeg's example.c (its "Tips" section on setjmp):
// error_exit longjmps back here instead of calling exit(), and the message is kept.
#include <csetjmp>
#include <cstdio>  // before jpeglib.h, which uses FILE without including it
#include <memory>

#include <ddl/data/jpeg_decode.h>

// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <ddl/base/error.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::data::detail {
namespace {

// A progressive JPEG may hold any number of scans, each a pass over the whole image: a
// small hostile file can keep the decoder busy for minutes. libjpeg-turbo's djpeg offers
// -maxscans for the same reason (its doc/libjpeg.txt); real encoders write about ten.
constexpr int kMaxScans = 1000;

struct ErrorManager {
  jpeg_error_mgr base;  // first: libjpeg hands back a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// libjpeg reports data that ends early as a warning and pads the image with grey; a
// truncated file must fail instead. Other warnings (extraneous bytes between markers) leave
// a usable image, as in PIL, and are not printed.
void on_message(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) on_error(cinfo);
}

void on_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message, "more than %d progressive scans (a hostile file?)", kMaxScans);
    std::longjmp(err->jump, 1);
  }
}

}  // namespace

bool is_jpeg(const std::vector<uint8_t>& bytes) { return bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8; }

Tensor decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& path, int64_t channels, int64_t max_pixels) {
  DDL_CHECK(channels >= 1 && channels <= 4, "read_image: channels must be 1 to 4, got ", channels);
  // Everything that must survive a longjmp lives outside the setjmp frame's locals that
  // change after it (C11 7.13.2.1): the structs below are only written through pointers.
  auto err = std::make_unique<ErrorManager>();
  auto cinfo = std::make_unique<jpeg_decompress_struct>();
  jpeg_progress_mgr progress{};
  progress.progress_monitor = on_progress;
  cinfo->err = jpeg_std_error(&err->base);
  err->base.error_exit = on_error;
  err->base.emit_message = on_message;
  err->message[0] = '\0';
  // The tensor is made before setjmp and only filled after it: no C++ object with a
  // destructor is created between setjmp and a longjmp (which would skip it).
  Tensor out;
  std::vector<uint8_t> row;
  if (setjmp(err->jump) != 0) {
    jpeg_destroy_decompress(cinfo.get());
    DDL_CHECK(false, "read_image: cannot decode JPEG '", path, "' (", bytes.size(), " bytes): ", err->message);
  }
  jpeg_create_decompress(cinfo.get());
  cinfo->progress = &progress;
  jpeg_mem_src(cinfo.get(), bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(cinfo.get(), TRUE);
  const int64_t w = cinfo->image_width, h = cinfo->image_height;
  if (w * h > max_pixels) {
    std::snprintf(err->message, sizeof err->message,
                  "a %lldx%lld image (%lld pixels), more than the %lld allowed (ImageFolderOptions::max_pixels); a "
                  "corrupt or hostile header?",
                  static_cast<long long>(w), static_cast<long long>(h), static_cast<long long>(w * h),
                  static_cast<long long>(max_pixels));
    std::longjmp(err->jump, 1);
  }
  // CMYK and YCCK (Adobe) have no conversion to RGB in libjpeg: decode to CMYK and convert below.
  const bool cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
  const bool grey = channels <= 2;  // 1: grey, 2: grey and alpha (as stb_image's req_comp)
  cinfo->out_color_space = cmyk ? JCS_CMYK : grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(cinfo.get());
  const int components = cinfo->output_components;
  row.resize(static_cast<size_t>(w) * components);
  out = empty({channels, h, w}, DType::UInt8);
  uint8_t* o = out.data<uint8_t>();
  const int64_t hw = h * w;
  // Adobe's CMYK JPEGs store inverted values (as PIL and stb read them): 255 is no ink.
  const bool inverted = cinfo->saw_Adobe_marker;
  while (cinfo->output_scanline < cinfo->output_height) {
    const int64_t y = cinfo->output_scanline;
    JSAMPROW rows[1] = {row.data()};
    jpeg_read_scanlines(cinfo.get(), rows, 1);
    for (int64_t x = 0; x < w; ++x) {
      const uint8_t* px = row.data() + x * components;
      uint8_t rgb[3];
      if (cmyk) {
        const int k = inverted ? px[3] : 255 - px[3];
        for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>(((inverted ? px[c] : 255 - px[c]) * k + 127) / 255);
      } else {
        for (int c = 0; c < 3; ++c) rgb[c] = px[components == 1 ? 0 : c];
      }
      // row: [W, components] -> out: [C, H, W]; stb_image's luma weights for CMYK to grey.
      if (grey)
        o[y * w + x] = components == 1 ? px[0] : static_cast<uint8_t>((rgb[0] * 77 + rgb[1] * 150 + rgb[2] * 29) >> 8);
      else
        for (int64_t c = 0; c < 3; ++c) o[c * hw + y * w + x] = rgb[c];
      if (channels == 2 || channels == 4) o[(channels - 1) * hw + y * w + x] = 255;  // opaque
    }
  }
  jpeg_finish_decompress(cinfo.get());
  jpeg_destroy_decompress(cinfo.get());
  return out;
}

}  // namespace ddl::data::detail
