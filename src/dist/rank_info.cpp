#include "tts/dist/rank_info.h"

#include <fmt/format.h>

#include <cctype>
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

// The number of tasks on this node under SLURM, and the variable it came from. srun sets
// SLURM_STEP_TASKS_PER_NODE (this step) and SLURM_TASKS_PER_NODE (the job) always, one entry per
// node; SLURM_NTASKS_PER_NODE only with --ntasks-per-node.
std::optional<std::pair<int, std::string>> slurm_tasks_on_this_node() {
  const int node = env("SLURM_NODEID") ? env_int("SLURM_NODEID", 0, INT_MAX) : 0;
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    if (!env(name)) continue;
    const std::vector<int> per_node = parse_slurm_tasks_per_node(*env(name), name);
    if (node < static_cast<int>(per_node.size())) {
      return std::make_pair(per_node[static_cast<size_t>(node)],
                            fmt::format("{}={} at SLURM_NODEID={}", name, *env(name), node));
    }
  }
  if (env("SLURM_NTASKS_PER_NODE")) {
    const std::string value = *env("SLURM_NTASKS_PER_NODE");
    return std::make_pair(parse_slurm_tasks_per_node(value, "SLURM_NTASKS_PER_NODE").front(),
                          "SLURM_NTASKS_PER_NODE=" + value);
  }
  return std::nullopt;
}

// A port for the ranks of one SLURM job step to meet on when MASTER_PORT is not set: derived
// from the job and step ids, so concurrent jobs and steps on a node rarely collide.
int slurm_default_port() {
  const long job = env("SLURM_JOB_ID") ? std::atol(env("SLURM_JOB_ID")->c_str()) : 0;
  const long step = env("SLURM_STEP_ID") ? std::atol(env("SLURM_STEP_ID")->c_str()) : 0;
  return 20000 + static_cast<int>((job * 16 + (step & 15)) % 20000);
}

}  // namespace

std::vector<int> parse_slurm_tasks_per_node(const std::string& value, const std::string& variable) {
  std::vector<int> counts;
  size_t pos = 0;
  auto number = [&](const char* what) {
    const size_t start = pos;
    while (pos < value.size() && std::isdigit(static_cast<unsigned char>(value[pos]))) ++pos;
    TTS_USAGE_CHECK(pos > start && pos - start < 7,
                    "environment: {}={:?}: expected {} at character {} (format: counts per node "
                    "separated by commas, \"N(xK)\" for K nodes of N, e.g. \"2(x3),1\")",
                    variable, value, what, start + 1);
    return std::atoi(value.substr(start, pos - start).c_str());
  };
  while (true) {
    const int count = number("a task count");
    int repeat = 1;
    if (pos < value.size() && value[pos] == '(') {
      TTS_USAGE_CHECK(value.compare(pos, 2, "(x") == 0,
                      "environment: {}={:?}: expected \"(x\" at character {}", variable, value,
                      pos + 1);
      pos += 2;
      repeat = number("a node count");
      TTS_USAGE_CHECK(pos < value.size() && value[pos] == ')',
                      "environment: {}={:?}: expected \")\" at character {}", variable, value,
                      pos + 1);
      ++pos;
    }
    counts.insert(counts.end(), static_cast<size_t>(repeat), count);
    if (pos == value.size()) return counts;
    TTS_USAGE_CHECK(value[pos] == ',', "environment: {}={:?}: expected \",\" at character {}",
                    variable, value, pos + 1);
    ++pos;
  }
}

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

  // One process per node is the only layout we can assume without the variable.
  info.local_rank = env(local_var) ? env_int(local_var, 0, INT_MAX) : 0;
  std::string local_world_source;
  std::optional<std::pair<int, std::string>> slurm_local;
  if (env("LOCAL_WORLD_SIZE")) {
    info.local_world_size = env_int("LOCAL_WORLD_SIZE", 1, info.world_size);
    local_world_source = "LOCAL_WORLD_SIZE=" + *env("LOCAL_WORLD_SIZE");
  } else if (slurm && (slurm_local = slurm_tasks_on_this_node())) {
    info.local_world_size = slurm_local->first;
    local_world_source = slurm_local->second;
  } else {
    info.local_world_size = info.local_rank + 1;
    local_world_source = fmt::format("{}={} (no LOCAL_WORLD_SIZE)", local_var, info.local_rank);
  }
  TTS_USAGE_CHECK(info.local_rank < info.local_world_size,
                  "environment: {}={} but {}: the local rank must be below the number of "
                  "processes on the node",
                  local_var, info.local_rank, local_world_source);
  TTS_USAGE_CHECK(info.local_world_size <= info.world_size, "environment: {} exceeds {}={}",
                  local_world_source, world_var, info.world_size);

  // All ranks on this node: they meet on loopback unless told otherwise.
  const bool one_node = info.local_world_size == info.world_size;
  if (auto addr = env("MASTER_ADDR")) info.master_addr = *addr;
  if (env("MASTER_PORT")) {
    info.master_port = env_int("MASTER_PORT", 1, 65535);
  } else if (slurm && info.world_size > 1) {
    info.master_port = slurm_default_port();
  } else {
    TTS_USAGE_CHECK(info.world_size == 1,
                    "environment: {}={} but MASTER_PORT is not set: the ranks need rank 0's "
                    "address and port to meet (set MASTER_ADDR and MASTER_PORT, as torchrun does)",
                    world_var, info.world_size);
  }
  if (env("TORCHELASTIC_USE_AGENT_STORE") == std::string("True") && info.master_port > 0) {
    // torchrun's agent hosts its own store on MASTER_PORT, in the store protocol of its PyTorch,
    // which a tts-train built on another libtorch may not speak (1.13's client cannot talk to
    // 2.x's server). Rank 0 hosts tts-train's own store next to it, fresh for every restart.
    TTS_USAGE_CHECK(info.master_port < 65535,
                    "environment: MASTER_PORT=65535 under torchrun: tts-train needs the port "
                    "after it for its own store; choose a lower port");
    ++info.master_port;
  }
  TTS_USAGE_CHECK(env("MASTER_ADDR") || one_node,
                  "environment: MASTER_ADDR is not set but the job spans several nodes ({}={}, "
                  "this node has {}); set MASTER_ADDR to the host of rank 0 (under SLURM: "
                  "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1))",
                  world_var, info.world_size, local_world_source);
  return info;
}

std::string RankInfo::describe() const {
  return fmt::format("rank {}/{} (local {}/{})", rank, world_size, local_rank, local_world_size);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

}  // namespace tts::dist
