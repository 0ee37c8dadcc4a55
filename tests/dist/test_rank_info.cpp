// RankInfo::from_env: torchrun variables, the SLURM fallback, and errors naming the variable;
// join_ranks, the rank lists of dist's messages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tts/core/error.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {
namespace {

const char* kVariables[] = {"RANK",
                            "WORLD_SIZE",
                            "LOCAL_RANK",
                            "LOCAL_WORLD_SIZE",
                            "MASTER_ADDR",
                            "MASTER_PORT",
                            "SLURM_PROCID",
                            "SLURM_NTASKS",
                            "SLURM_LOCALID",
                            "SLURM_NODEID",
                            "SLURM_NTASKS_PER_NODE",
                            "SLURM_STEP_TASKS_PER_NODE",
                            "SLURM_TASKS_PER_NODE",
                            "SLURM_JOB_ID",
                            "SLURM_STEP_ID",
                            "TORCHELASTIC_USE_AGENT_STORE"};

class FromEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) unsetenv(name);
  }
  void TearDown() override { SetUp(); }
  static std::string error_of_from_env() {
    try {
      RankInfo::from_env();
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(FromEnv, NothingSetMeansOneProcess) {
  RankInfo info = RankInfo::from_env();
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.world_size, 1);
  EXPECT_FALSE(info.distributed());
}

TEST_F(FromEnv, ReadsTorchrunVariables) {
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "8", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  setenv("MASTER_ADDR", "10.0.0.7", 1);
  setenv("MASTER_PORT", "29500", 1);
  RankInfo info = RankInfo::from_env();
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 4);
  EXPECT_EQ(info.master_addr, "10.0.0.7");
  EXPECT_EQ(info.master_port, 29500);
  EXPECT_TRUE(info.distributed());
  EXPECT_EQ(info.describe(), "rank 5/8 (local 1/4)");
}

TEST_F(FromEnv, FallsBackToSlurm) {
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "4", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_NTASKS_PER_NODE", "2(x2)", 1);
  setenv("MASTER_ADDR", "node1", 1);
  setenv("MASTER_PORT", "29400", 1);
  RankInfo info = RankInfo::from_env();
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.master_addr, "node1");
}

TEST_F(FromEnv, UnderTorchrunsAgentStoreRank0HostsOursOnTheNextPort) {
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  setenv("MASTER_PORT", "29500", 1);
  EXPECT_EQ(RankInfo::from_env().master_port, 29500);
  setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  EXPECT_EQ(RankInfo::from_env().master_port, 29501);
  setenv("MASTER_PORT", "65535", 1);
  EXPECT_NE(error_of_from_env().find("MASTER_PORT=65535 under torchrun"), std::string::npos)
      << error_of_from_env();
  setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);
  EXPECT_EQ(RankInfo::from_env().master_port, 65535);
}

TEST_F(FromEnv, InconsistentValuesNameTheVariable) {
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("MASTER_PORT", "29500", 1);
  EXPECT_NE(error_of_from_env().find("RANK=2 but WORLD_SIZE=2"), std::string::npos)
      << error_of_from_env();

  setenv("RANK", "one", 1);
  EXPECT_NE(error_of_from_env().find("RANK=\"one\" is not an integer"), std::string::npos)
      << error_of_from_env();

  setenv("RANK", "1", 1);
  unsetenv("MASTER_PORT");
  EXPECT_NE(error_of_from_env().find("MASTER_PORT is not set"), std::string::npos)
      << error_of_from_env();

  setenv("MASTER_PORT", "70000", 1);
  EXPECT_NE(error_of_from_env().find("MASTER_PORT=70000 is out of range"), std::string::npos)
      << error_of_from_env();

  setenv("MASTER_PORT", "29500", 1);
  setenv("LOCAL_RANK", "3", 1);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  EXPECT_NE(error_of_from_env().find("LOCAL_RANK=3 but LOCAL_WORLD_SIZE=2"), std::string::npos)
      << error_of_from_env();

  unsetenv("WORLD_SIZE");
  EXPECT_NE(error_of_from_env().find("RANK is set but WORLD_SIZE is not"), std::string::npos)
      << error_of_from_env();
}

TEST_F(FromEnv, SeveralNodesNeedMasterAddr) {
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  setenv("MASTER_PORT", "29500", 1);
  EXPECT_NE(error_of_from_env().find("set MASTER_ADDR"), std::string::npos) << error_of_from_env();
}

TEST(SlurmTasksPerNode, ExpandsRepeatsInNodeOrder) {
  EXPECT_EQ(parse_slurm_tasks_per_node("4", "V"), (std::vector<int>{4}));
  EXPECT_EQ(parse_slurm_tasks_per_node("2(x3),1", "V"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(parse_slurm_tasks_per_node("1,3(x2),2", "V"), (std::vector<int>{1, 3, 3, 2}));
  EXPECT_EQ(parse_slurm_tasks_per_node("16(x1)", "V"), (std::vector<int>{16}));
}

// What dist's errors print: "lost ranks 1, 3", "the resolved config of rank(s) 2 differs".
TEST(JoinRanks, ListsRanksCommaSeparatedInTheGivenOrder) {
  EXPECT_EQ(join_ranks({}), "");
  EXPECT_EQ(join_ranks({2}), "2");
  EXPECT_EQ(join_ranks({1, 3, 10}), "1, 3, 10");
}

TEST(SlurmTasksPerNode, MalformedValuesNameTheVariableAndThePosition) {
  auto error_of = [](const std::string& value) {
    try {
      parse_slurm_tasks_per_node(value, "SLURM_TASKS_PER_NODE");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("").find("SLURM_TASKS_PER_NODE=\"\": expected a task count at character 1"),
            std::string::npos)
      << error_of("");
  EXPECT_NE(error_of("2(x3").find("expected \")\" at character 5"), std::string::npos)
      << error_of("2(x3");
  EXPECT_NE(error_of("2(3)").find("expected \"(x\" at character 2"), std::string::npos)
      << error_of("2(3)");
  EXPECT_NE(error_of("2,").find("expected a task count at character 3"), std::string::npos)
      << error_of("2,");
  EXPECT_NE(error_of("2;1").find("expected \",\" at character 2"), std::string::npos)
      << error_of("2;1");
}

// `srun -n 2` on one node sets no SLURM_NTASKS_PER_NODE: the step's tasks per node say that
// both tasks share the node, and a one-node job meets on loopback without MASTER_ADDR.
TEST_F(FromEnv, SrunOnOneNodeNeedsNoMasterAddrOrPort) {
  setenv("SLURM_PROCID", "1", 1);
  setenv("SLURM_NTASKS", "2", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_NODEID", "0", 1);
  setenv("SLURM_STEP_TASKS_PER_NODE", "2", 1);
  setenv("SLURM_TASKS_PER_NODE", "2", 1);
  setenv("SLURM_JOB_ID", "4242", 1);
  setenv("SLURM_STEP_ID", "0", 1);
  RankInfo info = RankInfo::from_env();
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.world_size, 2);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.master_addr, "127.0.0.1");
  EXPECT_GE(info.master_port, 20000);
  EXPECT_LT(info.master_port, 40000);
  // Another step of the job meets on another port.
  setenv("SLURM_STEP_ID", "1", 1);
  EXPECT_NE(RankInfo::from_env().master_port, info.master_port);
}

TEST_F(FromEnv, SlurmTasksPerNodeAreReadAtThisNodesIndex) {
  setenv("SLURM_PROCID", "6", 1);
  setenv("SLURM_NTASKS", "7", 1);
  setenv("SLURM_LOCALID", "0", 1);
  setenv("SLURM_NODEID", "3", 1);
  setenv("SLURM_STEP_TASKS_PER_NODE", "2(x3),1", 1);
  setenv("MASTER_ADDR", "node1", 1);
  RankInfo info = RankInfo::from_env();
  EXPECT_EQ(info.local_world_size, 1);
  setenv("SLURM_PROCID", "5", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_NODEID", "2", 1);
  EXPECT_EQ(RankInfo::from_env().local_world_size, 2);
  // The step's layout wins over the job's (a step may use fewer tasks than the allocation).
  setenv("SLURM_TASKS_PER_NODE", "4(x2)", 1);
  EXPECT_EQ(RankInfo::from_env().local_world_size, 2);
  unsetenv("SLURM_STEP_TASKS_PER_NODE");
  setenv("SLURM_NODEID", "1", 1);
  EXPECT_EQ(RankInfo::from_env().local_world_size, 4);
}

TEST_F(FromEnv, SlurmOnSeveralNodesNamesTheVariablesItRead) {
  setenv("SLURM_PROCID", "0", 1);
  setenv("SLURM_NTASKS", "2", 1);
  setenv("SLURM_LOCALID", "0", 1);
  setenv("SLURM_NODEID", "0", 1);
  setenv("SLURM_STEP_TASKS_PER_NODE", "1(x2)", 1);
  const std::string error = error_of_from_env();
  EXPECT_NE(error.find("MASTER_ADDR is not set but the job spans several nodes (SLURM_NTASKS=2, "
                       "this node has SLURM_STEP_TASKS_PER_NODE=1(x2) at SLURM_NODEID=0)"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("LOCAL_WORLD_SIZE"), std::string::npos) << error;
}

}  // namespace
}  // namespace tts::dist
