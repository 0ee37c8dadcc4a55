// Pre-emphasis and its inverse.
#include <gtest/gtest.h>

#include "tts/audio/preemphasis.h"
#include "tts/core/error.h"

namespace tts::audio {
namespace {

TEST(PreEmphasis, AppliesTheFirstOrderFilterLikeLfilter) {
  std::vector<float> x = {1.f, 0.5f, -0.25f, 0.f};
  PreEmphasis(0.97).apply(x);
  EXPECT_FLOAT_EQ(x[0], 1.f);  // x[-1] = 0
  EXPECT_FLOAT_EQ(x[1], 0.5f - 0.97f);
  EXPECT_FLOAT_EQ(x[2], -0.25f - 0.97f * 0.5f);
  EXPECT_FLOAT_EQ(x[3], 0.97f * 0.25f);
}

TEST(PreEmphasis, InverseUndoesIt) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.01 * i * i));
  std::vector<float> y = x;
  PreEmphasis filter(0.97);
  filter.apply(y);
  filter.invert(y);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-4) << i;
}

TEST(PreEmphasis, ZeroIsTheIdentity) {
  std::vector<float> x = {0.1f, -0.2f, 0.3f};
  PreEmphasis off(0.0);
  EXPECT_FALSE(off.enabled());
  off.apply(x);
  off.invert(x);
  EXPECT_EQ(x, (std::vector<float>{0.1f, -0.2f, 0.3f}));
}

TEST(PreEmphasis, RejectsCoefficientsOutsideTheUnitInterval) {
  EXPECT_THROW(PreEmphasis(1.0), Error);
  EXPECT_THROW(PreEmphasis(-0.1), Error);
}

}  // namespace
}  // namespace tts::audio
