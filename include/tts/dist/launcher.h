// The built-in single-node launcher behind `tts-train train --nproc-per-node N`: it does what
// torchrun does for one node, so a worker cannot tell the difference.
#pragma once

#include <string>
#include <vector>

#include "tts/config/distributed_options.h"

namespace tts::dist {

// Spawns `nproc` copies of `worker_argv` (argv[0] is the executable; the caller has removed
// --nproc-per-node) with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
// MASTER_PORT set (options.master_addr; options.master_port, or a free port when 0), and
// OMP_NUM_THREADS = options.threads_per_rank unless already set. Every line a worker writes to
// stdout or stderr is copied to ours prefixed "[rank r] ". Supervision: when a worker exits
// non-zero or is killed by a signal, the others get SIGTERM and, if still running after
// options.timeout_s, SIGKILL; SIGINT/SIGTERM received by the launcher are forwarded to every
// worker (which finish their step, checkpoint and exit 0). Returns 0 when all workers exit 0;
// otherwise logs which rank failed first and how, and returns that rank's exit code (128 +
// signal number for a killed one). With `max_restarts` > 0, a failure (not a stop asked for by a
// signal) restarts all workers with the same command line, up to that many times, as torchrun
// --max-restarts does; workers run with --resume auto then continue from the latest checkpoint.
// `logs_dir`, when given, is where the workers write logs/rank_K.log: the final error names it.
int launch_workers(int nproc, const std::vector<std::string>& worker_argv,
                   const config::DistributedOptions& options, int max_restarts = 0,
                   const std::string& logs_dir = "");

// This process's command line (from /proc/self/cmdline, argv[0] replaced by the path of the
// running executable) without the launcher's `options` and their values ("--nproc-per-node 4"
// or "--nproc-per-node=4"): what each worker runs.
std::vector<std::string> worker_command_line(const std::vector<std::string>& options);

// A TCP port on `addr` that is free now (bound to port 0 and released).
int pick_free_port(const std::string& addr);

}  // namespace tts::dist
