// Where a tensor's storage lives: the CPU or CUDA device n.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace ddl {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
  // Parses "cpu", "cuda", "cuda:1".
  static Device parse(const std::string& s);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device&) const = default;
  std::string str() const;
};

std::ostream& operator<<(std::ostream& os, Device d);
std::ostream& operator<<(std::ostream& os, DeviceType t);

// Makes `d` the calling thread's current device: the GPU that work naming no device
// (a new context, cudaHostAlloc) uses and that each op's device guard returns to. A
// process that uses one GPU other than cuda:0 (cuda:LOCAL_RANK) calls it first, or the
// runtime also opens a context on cuda:0. No-op for the CPU; throws ddl::Error for a GPU
// that does not exist. Other threads keep their own current device (CUDA's rule).
void set_current_device(Device d);
// The calling thread's current GPU, or the CPU when no GPU is usable. A thread that
// allocates for another (a loader pinning batches) passes it on with set_current_device.
Device current_device();

namespace detail {
// The CUDA part: tensor/cuda/current_device.cpp, or tensor/cpu/current_device.cpp without
// CUDA. cuda_current_device() is -1 when no GPU is usable.
void cuda_set_current_device(int index);
int cuda_current_device();
}  // namespace detail

}  // namespace ddl
