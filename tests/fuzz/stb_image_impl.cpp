// stb_image's implementation, compiled with the fuzz target's instrumentation. The linker
// takes these definitions before Debian's prebuilt libstb.so (which data/ links), so
// read_image decodes through this copy; see fuzz_image.cpp.
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
