// Device names and parsing, and choosing the current device.
#include <ddl/base/error.h>
#include <ddl/tensor/core/device.h>

namespace ddl {

Device Device::parse(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "cuda") return cuda(0);
  if (s.rfind("cuda:", 0) == 0) {
    const std::string idx = s.substr(5);
    DDL_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos, "Device: cannot parse '", s,
              "'; expected cpu, cuda or cuda:N");
    return cuda(std::stoi(idx));
  }
  DDL_CHECK(false, "Device: cannot parse '", s, "'; expected cpu, cuda or cuda:N");
  return cpu();
}

std::string Device::str() const { return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index); }

std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << (t == DeviceType::CPU ? "cpu" : "cuda"); }

void set_current_device(Device d) {
  if (d.is_cuda()) detail::cuda_set_current_device(d.index);
}

Device current_device() {
  const int index = detail::cuda_current_device();
  return index >= 0 ? Device::cuda(index) : Device::cpu();
}

}  // namespace ddl
