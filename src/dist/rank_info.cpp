#include "tts/dist/rank_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <optional>

#include "tts/core/error.h"

namespace tts::dist {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

int env_int(const char* name, int min_value, int max_value) {
  const std::string text = *env(name);
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  TTS_USAGE_CHECK(errno == 0 && end != text.c_str() && *end == '\0',
                  "environment: {}={:?} is not an integer; unset it or set a number", name, text);
  TTS_USAGE_CHECK(value >= min_value && value <= max_value,
                  "environment: {}={} is out of range: expected {} .. {}", name, value, min_value,
                  max_value);
  return static_cast<int>(value);
}

}  // namespace

RankInfo RankInfo::from_env() {
  RankInfo info;
  const bool torchrun = env("RANK") || env("WORLD_SIZE");
  const bool slurm = !torchrun && env("SLURM_PROCID") && env("SLURM_NTASKS");
  if (!torchrun && !slurm) return info;

  const char* rank_var = torchrun ? "RANK" : "SLURM_PROCID";
  const char* world_var = torchrun ? "WORLD_SIZE" : "SLURM_NTASKS";
  const char* local_var = torchrun ? "LOCAL_RANK" : "SLURM_LOCALID";
  TTS_USAGE_CHECK(env(rank_var) && env(world_var),
                  "environment: {} is set but {} is not; a launcher sets both (torchrun: RANK and "
                  "WORLD_SIZE)",
                  env(rank_var) ? rank_var : world_var, env(rank_var) ? world_var : rank_var);
  info.world_size = env_int(world_var, 1, INT_MAX);
  info.rank = env_int(rank_var, 0, INT_MAX);
  TTS_USAGE_CHECK(info.rank < info.world_size,
                  "environment: {}={} but {}={}: the rank must be below the world size", rank_var,
                  info.rank, world_var, info.world_size);

  if (env(local_var)) {
    info.local_rank = env_int(local_var, 0, INT_MAX);
  } else {
    // One process per node is the only layout we can assume without the variable.
    info.local_rank = 0;
  }
  const char* local_world_var = "LOCAL_WORLD_SIZE";
  if (env(local_world_var)) {
    info.local_world_size = env_int(local_world_var, 1, info.world_size);
  } else if (slurm && env("SLURM_NTASKS_PER_NODE")) {
    // "4" or "4(x2)": the count before any parenthesis.
    const std::string per_node = *env("SLURM_NTASKS_PER_NODE");
    info.local_world_size = std::max(1, std::atoi(per_node.c_str()));
    local_world_var = "SLURM_NTASKS_PER_NODE";
  } else {
    info.local_world_size = info.local_rank + 1;
  }
  TTS_USAGE_CHECK(info.local_rank < info.local_world_size,
                  "environment: {}={} but {}={}: the local rank must be below the number of "
                  "processes on the node",
                  local_var, info.local_rank, local_world_var, info.local_world_size);
  TTS_USAGE_CHECK(info.local_world_size <= info.world_size, "environment: {}={} exceeds {}={}",
                  local_world_var, info.local_world_size, world_var, info.world_size);

  if (auto addr = env("MASTER_ADDR")) info.master_addr = *addr;
  if (env("MASTER_PORT")) {
    info.master_port = env_int("MASTER_PORT", 1, 65535);
  } else {
    TTS_USAGE_CHECK(info.world_size == 1,
                    "environment: {}={} but MASTER_PORT is not set: the ranks need rank 0's "
                    "address and port to meet (set MASTER_ADDR and MASTER_PORT, as torchrun does)",
                    world_var, info.world_size);
  }
  if (info.world_size > 1 && !env("MASTER_ADDR")) {
    TTS_USAGE_CHECK(info.local_world_size == info.world_size,
                    "environment: MASTER_ADDR is not set but the job spans several nodes ({}={}, "
                    "{}={}); set MASTER_ADDR to the host of rank 0",
                    world_var, info.world_size, local_world_var, info.local_world_size);
  }
  return info;
}

std::string RankInfo::describe() const {
  return fmt::format("rank {}/{} (local {}/{})", rank, world_size, local_rank, local_world_size);
}

}  // namespace tts::dist
