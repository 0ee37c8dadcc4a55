// WaveNet spoken as its mel frames come: the upsampling runs on windows with its reach around
// each chunk and the samples are drawn from the same random stream, so every plan (one frame,
// odd sizes, one chunk) gives generate()'s samples for the whole padded mel, for every r9y9
// fixture (mixture of logistics, Gaussian, normal, categorical).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/models/frame_windows.h"
#include "tts/models/wavenet/speaking/generate.h"
#include "wavenet_fixture.h"

using tts::models::ChunkPlan;

TEST(WavenetStream, ChunksOfEveryPlanAreTheWholeMelsSamples) {
  for (const std::string& name : wavenet_fixture::names()) {
    SCOPED_TRACE(name);
    wavenet_fixture::Fixture f = wavenet_fixture::load(name);
    const int64_t pad = f.model->options().cin_pad;
    // One utterance: the fixture's first, without its padding, a few frames long.
    const torch::Tensor padded = f.c.narrow(0, 0, 1);
    const int64_t frames = std::min<int64_t>(padded.size(2) - 2 * pad, 6);
    const torch::Tensor mel = padded.narrow(2, pad, frames);  // [1, n_mels, frames]
    const torch::Tensor g = f.g.defined() ? f.g.narrow(0, 0, 1) : torch::Tensor();
    const torch::Tensor whole =
        tts::wavenet::generate(f.model, tts::wavenet::pad_mel(mel, pad), 7, g).reshape({-1});
    const torch::Tensor rows = mel[0].t().contiguous();  // [frames, n_mels]
    for (const ChunkPlan& plan : {ChunkPlan::whole(), ChunkPlan{1, 1}, ChunkPlan{3, 5}}) {
      SCOPED_TRACE(plan.describe());
      auto stream = tts::wavenet::generation_stream(f.model, 7, g, plan);
      std::vector<float> audio;
      for (int64_t i = 0; i < frames; ++i) {
        const std::vector<float> out = stream->push(rows.narrow(0, i, 1), i + 1 == frames);
        audio.insert(audio.end(), out.begin(), out.end());
      }
      ASSERT_EQ(static_cast<int64_t>(audio.size()), whole.numel());
      const torch::Tensor streamed = torch::from_blob(audio.data(), {whole.numel()});
      EXPECT_LT((streamed - whole).abs().max().item<double>(), 1e-4);
    }
  }
}
