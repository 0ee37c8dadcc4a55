// The FLOP count of a training step, from the model's shapes.
#include <gtest/gtest.h>

#include "tts/models/tacotron2/training/flops.h"
#include "tts/train/precision.h"

using tts::config::ModelOptions;
using tts::tacotron2::count_step_flops;
using tts::tacotron2::StepShape;

namespace {

ModelOptions small() {
  ModelOptions o;
  o.symbols_embedding_dim = 8;
  o.encoder_embedding_dim = 8;
  o.encoder_n_convolutions = 1;
  o.encoder_kernel_size = 3;
  o.n_frames_per_step = 1;
  o.prenet_dim = 4;
  o.attention_rnn_dim = 6;
  o.decoder_rnn_dim = 6;
  o.attention_dim = 2;
  o.attention_location_n_filters = 2;
  o.attention_location_kernel_size = 3;
  o.postnet_n_convolutions = 2;
  o.postnet_embedding_dim = 4;
  o.postnet_kernel_size = 3;
  return o;
}

}  // namespace

TEST(StepFlops, CountsEveryProductOfASmallModelByHand) {
  // One utterance of 2 symbols, 1 frame of 2 mels, r 1.
  StepShape shape{1, 2, 1, 2, 0};
  double encoder = 2.0 * 2 * 8 * 8 * 3            // convolution
                   + 2 * 2 * (2.0 * 1 * 12 * 16)  // BiLSTM, 4 units a direction, 2 steps
                   + 2.0 * 2 * 8 * 2;             // attention memory projection
  double step = 2.0 * 2 * 4 + 2.0 * 4 * 4         // prenet
                + 2.0 * (4 + 8 + 6) * 24          // attention LSTM
                + 2.0 * 6 * 2                     // query
                + 2.0 * 2 * 2 * 2 * 3             // location convolution
                + 2.0 * 2 * 2 * 2                 // location projection
                + 2.0 * 2 * 2                     // energies
                + 2.0 * 2 * 8                     // context
                + 2.0 * (6 + 8 + 6) * 24          // decoder LSTM
                + 2.0 * 14 * 3;                   // mel (2) and stop (1) projections
  double postnet = 2.0 * 1 * 2 * 4 * 3 + 2.0 * 1 * 4 * 2 * 3;
  auto flops = count_step_flops(small(), shape);
  EXPECT_DOUBLE_EQ(flops.forward, encoder + step + postnet);
  EXPECT_DOUBLE_EQ(flops.training(), 3 * flops.forward);
}

TEST(StepFlops, GrowWithTheBatchAndTheFramesAndShrinkWithR) {
  ModelOptions o;  // NVIDIA's dimensions
  auto base = count_step_flops(o, {4, 60, 200, 80, 0}).forward;
  EXPECT_NEAR(count_step_flops(o, {8, 60, 200, 80, 0}).forward, 2 * base, 1e-9 * base);
  EXPECT_GT(count_step_flops(o, {4, 60, 400, 80, 0}).forward, 1.9 * base);
  o.n_frames_per_step = 2;
  EXPECT_LT(count_step_flops(o, {4, 60, 200, 80, 0}).forward, 0.75 * base);  // the decoder halves
  o.predict_linear = true;
  EXPECT_GT(count_step_flops(o, {4, 60, 200, 80, 513}).forward,
            count_step_flops(o, {4, 60, 200, 80, 0}).forward);
}

TEST(StepFlops, RefusesAnEmptyShape) {
  EXPECT_THROW(count_step_flops(ModelOptions{}, {0, 60, 200, 80, 0}), std::exception);
}

TEST(GemmPeak, MeasuresAPositiveRate) {
  EXPECT_GT(tts::train::measure_gemm_gflops(torch::kCPU, torch::kFloat32, 128), 0.0);
}
