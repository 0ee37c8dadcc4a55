#include "tts/core/host_read.h"

#include <ATen/record_function.h>

#include <vector>

namespace tts {

torch::Tensor host_read(const torch::Tensor& tensor) {
  RECORD_FUNCTION(kHostReadName, std::vector<c10::IValue>());
  return tensor.to(torch::kCPU).contiguous();
}

}  // namespace tts
