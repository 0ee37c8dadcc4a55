// The one way training reads a device value on the host: at a log interval, a checkpoint, a
// validation, the end of a run, never inside a training iteration (Note [No host reads in a
// step], tts/train/step.h). `tts-train bench --profile` counts every call as a sync, also on
// the CPU, where the copy costs nothing but the same code on a GPU would stall the launch queue.
#pragma once

#include <torch/types.h>

namespace tts {

// The name the call is recorded under (RecordFunction), which the OpCounter counts as a sync.
inline constexpr const char* kHostReadName = "tts::host_read";

// `tensor` on the CPU, contiguous (the tensor itself when it is already both).
torch::Tensor host_read(const torch::Tensor& tensor);

}  // namespace tts
