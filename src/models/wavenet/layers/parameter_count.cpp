#include "tts/models/wavenet/layers/parameter_count.h"

namespace tts::wavenet {
namespace {

// A weight-normed convolution (network.h's WeightNormConv): v [out, in, taps], g one per output
// channel, and a bias per output channel when it has one.
double conv(double in, double out, double taps, bool bias) {
  return out * in * taps + out + (bias ? out : 0);
}

}  // namespace

double parameter_count(const config::WavenetOptions& o, int64_t cin_channels) {
  const double r = o.residual_channels;
  const double gate = o.gate_channels;
  const double half = static_cast<double>(o.gate_channels / 2);
  const double skip = o.skip_out_channels;
  const double cin = static_cast<double>(cin_channels);
  double layer = conv(r, gate, o.kernel_size, true) + conv(cin, gate, 1, false) +
                 conv(half, r, 1, true) + conv(half, skip, 1, true);
  if (o.gin_channels > 0) layer += conv(o.gin_channels, gate, 1, false);
  double total = conv(1, r, 1, true) + o.layers * layer + conv(skip, skip, 1, true) +
                 conv(skip, o.out_channels, 1, true);
  if (o.gin_channels > 0 && o.use_speaker_embedding) {
    total += static_cast<double>(o.n_speakers) * o.gin_channels;
  }
  total += cin * cin * (2.0 * o.cin_pad + 1);
  for (int scale : o.upsample_scales) {
    total += conv(1, 1, static_cast<double>(o.freq_axis_kernel_size) * (2.0 * scale + 1), false);
  }
  return total;
}

}  // namespace tts::wavenet
