// Private to src/dist: the NCCL process group, compiled only in CUDA builds (nccl_group_cuda.cpp).
#pragma once

#include "tts/dist/c10d_compat.h"

namespace tts::dist {

// Makes cuda:local_rank this process's current device and creates the NCCL group on it.
compat::GroupPtr make_nccl_group(const compat::StorePtr& store, int rank, int size, int local_rank,
                                 double timeout_s);

}  // namespace tts::dist
