#include "tts/models/tacotron2/training/flops.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "tts/core/error.h"

#ifdef TTS_WITH_CUDA
#include <torch/cuda.h>
#endif

namespace tts::tacotron2 {
namespace {

// [rows, in] @ [in, out]
double product(double rows, double in, double out) { return 2 * rows * in * out; }

// A 1-D convolution over `length` positions.
double convolution(double length, double in, double out, double kernel) {
  return 2 * length * in * out * kernel;
}

// An LSTM cell's gates for one step: [rows, in + hidden] @ [in + hidden, 4 hidden].
double lstm_step(double rows, double in, double hidden) {
  return product(rows, in + hidden, 4 * hidden);
}

}  // namespace

StepFlops count_step_flops(const config::ModelOptions& o, const StepShape& s) {
  TTS_CHECK(s.batch >= 1 && s.text_len >= 1 && s.frames >= 1 && s.n_mels >= 1,
            "count_step_flops: batch, text_len, frames and n_mels must be >= 1");
  const double b = static_cast<double>(s.batch);
  const double text = static_cast<double>(s.text_len);
  const double frames = static_cast<double>(s.frames);
  const double mels = static_cast<double>(s.n_mels);
  const double r = static_cast<double>(o.n_frames_per_step);
  const double steps = std::ceil(frames / r);
  const double e = o.encoder_embedding_dim;

  double encoder = 0;
  for (int i = 0; i < o.encoder_n_convolutions; ++i) {
    double in = i == 0 ? o.symbols_embedding_dim : e;
    encoder += convolution(b * text, in, e, o.encoder_kernel_size);
  }
  encoder += 2 * text * lstm_step(b, e, e / 2);  // two directions of e/2 units
  // The attention's projection of the encoder outputs, once per utterance.
  encoder += product(b * text, e, o.attention_dim);

  double per_step = 0;
  per_step += product(b, mels * r, o.prenet_dim) + product(b, o.prenet_dim, o.prenet_dim);
  per_step += lstm_step(b, o.prenet_dim + e, o.attention_rnn_dim);
  per_step += product(b, o.attention_rnn_dim, o.attention_dim);  // query
  per_step += convolution(b * text, 2, o.attention_location_n_filters,
                          o.attention_location_kernel_size);  // location features
  per_step += product(b * text, o.attention_location_n_filters, o.attention_dim);
  per_step += product(b * text, o.attention_dim, 1);  // energies (v)
  per_step += product(b, text, e);                    // context
  per_step += lstm_step(b, o.attention_rnn_dim + e, o.decoder_rnn_dim);
  per_step += product(b, o.decoder_rnn_dim + e, mels * r + r);  // mel and stop projections

  double postnet = 0;
  for (int i = 0; i < o.postnet_n_convolutions; ++i) {
    double in = i == 0 ? mels : o.postnet_embedding_dim;
    double out = i + 1 == o.postnet_n_convolutions ? mels : o.postnet_embedding_dim;
    postnet += convolution(b * frames, in, out, o.postnet_kernel_size);
  }

  double head = 0;
  if (s.n_linear > 0) {
    const double bank = o.cbhg_conv_channels, projection = o.cbhg_projection_dim;
    const double units = o.cbhg_rnn_units;
    for (int k = 1; k <= o.cbhg_kernels; ++k) head += convolution(b * frames, mels, bank, k);
    head += convolution(b * frames, bank * o.cbhg_kernels, projection, 3);
    head += convolution(b * frames, projection, mels, 3);
    head += product(b * frames, mels, units);
    head += o.cbhg_highway_layers * 2 * product(b * frames, units, units);
    head += 2 * frames * product(b, units + units, 3 * units);  // GRU gates, two directions
    head += product(b * frames, 2 * units, static_cast<double>(s.n_linear));
  }
  return StepFlops{encoder + steps * per_step + postnet + head};
}

}  // namespace tts::tacotron2
