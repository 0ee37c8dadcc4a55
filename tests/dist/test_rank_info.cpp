// RankInfo::from_env: torchrun variables, the SLURM fallback, and errors naming the variable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tts/core/error.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {
namespace {

const char* kVariables[] = {
    "RANK",        "WORLD_SIZE",   "LOCAL_RANK",   "LOCAL_WORLD_SIZE", "MASTER_ADDR",
    "MASTER_PORT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",    "SLURM_NTASKS_PER_NODE"};

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

}  // namespace
}  // namespace tts::dist
