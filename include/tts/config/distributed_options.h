// Config section `distributed`: data-parallel training across processes.
#pragma once

#include <string>

#include "tts/config/field.h"

namespace tts::config {

// The collective backend: auto picks NCCL for CUDA and Gloo for the CPU.
enum class Backend { kAuto, kGloo, kNccl };
TTS_CHOICE_NAMES(Backend, {Backend::kAuto, "auto"}, {Backend::kGloo, "gloo"},
                 {Backend::kNccl, "nccl"});

// Ceilings no real run reaches. Gradient buckets: 25 MB by default (PyTorch's DDP); a bucket is a
// buffer of its own, so one of gigabytes doubles the model's memory for nothing.
inline constexpr double kMaxBucketMb = 4096;
// Threads per rank: one machine's cores.
inline constexpr int kMaxThreadsPerRank = 4096;

struct DistributedOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  Backend backend = Backend::kAuto;
  double timeout_s = 60.0;
  double bucket_mb = 25.0;
  double first_bucket_mb = 1.0;
  int threads_per_rank = 1;
  int check_replicas_every = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;

  template <class V>
  void visit(V& v) {
    v("backend", backend, "auto (nccl on CUDA, gloo on CPU), gloo or nccl");
    v("timeout_s", timeout_s, "a lost or stuck rank stops all others within this time, s");
    v("bucket_mb", bucket_mb, "gradient bucket size for overlapped all-reduce, MB");
    v("first_bucket_mb", first_bucket_mb, "size of the first (last-layer) bucket, MB");
    v("threads_per_rank", threads_per_rank, "intra-op threads of each CPU rank");
    v("check_replicas_every", check_replicas_every,
      "compare parameter checksums across ranks every N steps; 0 = off");
    v("master_addr", master_addr, "rendezvous address for the built-in launcher");
    v("master_port", master_port, "rendezvous port for the built-in launcher; 0 = a free port");
  }
  void validate() const;
};

}  // namespace tts::config
