// Where this process sits in a data-parallel job, read from the environment that launchers set:
// torchrun (and our built-in launcher) set RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT; under SLURM (srun), SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the
// tasks per node (SLURM_STEP_TASKS_PER_NODE at SLURM_NODEID) stand in for the first four. With
// none of them set the process runs alone (world size 1).
#pragma once

#include <string>
#include <vector>

namespace tts::dist {

struct RankInfo {
  int rank = 0;                           // global rank, 0 .. world_size-1
  int world_size = 1;                     // number of processes in the job
  int local_rank = 0;                     // rank on this node; selects the GPU (cuda:local_rank)
  int local_world_size = 1;               // processes on this node
  std::string master_addr = "127.0.0.1";  // host of rank 0, where the TCPStore listens
  // TCPStore port; required when world_size > 1. Under torchrun 2.x's agent store
  // (TORCHELASTIC_USE_AGENT_STORE=True) the agent holds MASTER_PORT: then MASTER_PORT + 1.
  int master_port = 0;

  // Reads the torchrun variables, else the SLURM ones, else returns a single-process RankInfo.
  // Under SLURM, a job on one node needs no MASTER_ADDR (127.0.0.1) and, without MASTER_PORT,
  // meets on a port derived from the job and step ids. Throws UsageError naming the variable
  // when a value is not an integer, out of range, or inconsistent with the others (e.g.
  // RANK >= WORLD_SIZE, WORLD_SIZE > 1 without MASTER_PORT).
  static RankInfo from_env();

  bool distributed() const { return world_size > 1; }
  // "rank 1/4 (local 1/2)", for logs.
  std::string describe() const;
};

// SLURM's compressed tasks-per-node list, one entry per node in node order: "2(x3),1" is
// {2, 2, 2, 1}. Throws UsageError naming `variable` when `value` is not of that form.
std::vector<int> parse_slurm_tasks_per_node(const std::string& value, const std::string& variable);

// "1, 3": ranks as the errors and logs of dist/ list them.
std::string join_ranks(const std::vector<int>& ranks);

}  // namespace tts::dist
