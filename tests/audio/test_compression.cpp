// Log and dB compression against values worked out by hand, and their inverses; the fused CPU
// path against the torch ops (the path of GPU and float64 tensors).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tts/audio/compression.h"

namespace tts::audio {
namespace {

TEST(Compression, LogIsTheNaturalLogWithAFloor) {
  config::AudioOptions o;
  o.compression = config::Compression::kLog;
  Compression c(o);
  torch::Tensor s = torch::tensor({0.0f, 1e-6f, 1e-5f, 1.0f, 10.0f});
  torch::Tensor out = c.compress(s);
  EXPECT_NEAR(out[0].item<float>(), std::log(1e-5), 1e-5);
  EXPECT_NEAR(out[1].item<float>(), std::log(1e-5), 1e-5);
  EXPECT_NEAR(out[3].item<float>(), 0.0, 1e-7);
  EXPECT_NEAR(out[4].item<float>(), std::log(10.0), 1e-6);
  torch::Tensor back = c.decompress(out);
  EXPECT_NEAR(back[4].item<float>(), 10.0, 1e-5);
  EXPECT_NEAR(back[2].item<float>(), 1e-5, 1e-10);
}

config::AudioOptions rayhane() {
  config::AudioOptions o;
  o.compression = config::Compression::kDb;
  o.min_level_db = -100;
  o.ref_level_db = 20;
  o.max_abs_value = 4;
  return o;
}

TEST(Compression, DbSymmetricNormalizationMatchesRayhane) {
  Compression c(rayhane());
  // S = 1: D = 0 - 20 = -20 dB; 2*4*(80/100) - 4 = 2.4.
  // S = 10^-2: D = -60 dB; 8*(40/100) - 4 = -0.8.
  // S = 10^6: D = 100 dB -> 12, clipped to 4. S = 0: floor -100 dB - 20 -> -5.6, clipped to -4.
  torch::Tensor out = c.compress(torch::tensor({1.0f, 1e-2f, 1e6f, 0.0f}));
  EXPECT_NEAR(out[0].item<float>(), 2.4, 1e-5);
  EXPECT_NEAR(out[1].item<float>(), -0.8, 1e-5);
  EXPECT_FLOAT_EQ(out[2].item<float>(), 4.0f);
  EXPECT_FLOAT_EQ(out[3].item<float>(), -4.0f);
  torch::Tensor back = c.decompress(out.slice(0, 0, 2));
  EXPECT_NEAR(back[0].item<float>(), 1.0, 1e-5);
  EXPECT_NEAR(back[1].item<float>(), 1e-2, 1e-7);
}

TEST(Compression, DbAsymmetricAndUnclippedAndUnnormalized) {
  config::AudioOptions o = rayhane();
  o.symmetric = false;
  // S = 1: 4 * 80/100 = 3.2.
  EXPECT_NEAR(Compression(o).compress(torch::tensor({1.0f}))[0].item<float>(), 3.2, 1e-5);
  o.allow_clipping = false;
  // S = 10^6: D = 100 dB; 4 * 200/100 = 8, kept.
  EXPECT_NEAR(Compression(o).compress(torch::tensor({1e6f}))[0].item<float>(), 8.0, 1e-4);
  o.signal_normalization = false;
  Compression plain(o);
  EXPECT_NEAR(plain.compress(torch::tensor({1.0f}))[0].item<float>(), -20.0, 1e-5);
  EXPECT_NEAR(plain.decompress(torch::tensor({-20.0f}))[0].item<float>(), 1.0, 1e-6);
}

TEST(Compression, DbRoundTripsInsideTheRange) {
  for (bool symmetric : {true, false}) {
    config::AudioOptions o = rayhane();
    o.symmetric = symmetric;
    Compression c(o);
    torch::Tensor s = torch::logspace(-3.9, 0.9, 50);  // -78 .. 18 dB, inside the unclipped range
    torch::Tensor back = c.decompress(c.compress(s));
    EXPECT_LE(((back - s).abs() / s).max().item<float>(), 1e-4) << symmetric;
  }
}

// compress() on a float32 CPU tensor runs one fused, vectorized pass; on float64 it runs the
// torch ops. Values from far below the floors to far above the clip level, odd lengths (the
// 1-3 value tail), every compression setting.
TEST(Compression, CpuPathMatchesTorchOps) {
  std::vector<config::AudioOptions> settings;
  config::AudioOptions log_options;
  settings.push_back(log_options);
  for (bool symmetric : {true, false}) {
    for (bool clip : {true, false}) {
      for (bool normalize : {true, false}) {
        config::AudioOptions o = rayhane();
        o.symmetric = symmetric;
        o.allow_clipping = clip;
        o.signal_normalization = normalize;
        settings.push_back(o);
      }
    }
  }
  torch::manual_seed(1);
  for (int64_t n : {1, 3, 4, 7, 1001}) {
    torch::Tensor s = torch::pow(10.0, torch::rand({n}, torch::kFloat64) * 16.0 - 10.0);
    s[0] = 0.0;
    for (const config::AudioOptions& o : settings) {
      Compression c(o);
      torch::Tensor fast = c.compress(s.to(torch::kFloat32));
      torch::Tensor reference = c.compress(s);  // torch ops in double
      ASSERT_EQ(fast.scalar_type(), torch::kFloat32);
      // Float rounding: a few ulp of the value (unnormalized dB reach 100).
      const double error = ((fast.to(torch::kFloat64) - reference).abs() / (1.0 + reference.abs()))
                               .max()
                               .item<double>();
      EXPECT_LE(error, 2e-6) << o.compression << " symmetric " << o.symmetric << " clip "
                             << o.allow_clipping << " normalize " << o.signal_normalization << " n "
                             << n;
    }
  }
}

TEST(Compression, CpuPathKeepsNanAndInfLikeTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  torch::Tensor s = torch::tensor({inf, nan, 1.0f, 0.0f, -1.0f});
  Compression log_compression(config::AudioOptions{});
  torch::Tensor out = log_compression.compress(s);
  EXPECT_EQ(out[0].item<float>(), inf);
  EXPECT_TRUE(std::isnan(out[1].item<float>()));
  EXPECT_FLOAT_EQ(out[4].item<float>(), std::log(1e-5f));
  torch::Tensor db = Compression(rayhane()).compress(s);
  EXPECT_FLOAT_EQ(db[0].item<float>(), 4.0f);  // clipped, like torch's clamp
  EXPECT_TRUE(std::isnan(db[1].item<float>()));
  EXPECT_FLOAT_EQ(db[4].item<float>(), -4.0f);
}

}  // namespace
}  // namespace tts::audio
