// Config section `hifigan`: the HiFi-GAN vocoder (model.kind: hifigan). Names and defaults follow
// jik876/hifi-gan's config_v1.json; its training settings (learning_rate, adam_b1, adam_b2,
// lr_decay, batch_size, seed) live in section `train` (configs/hifigan_v1.yaml says which is
// which), its audio settings (sampling_rate, n_fft, hop_size, win_size, num_mels, fmin, fmax) in
// section `audio`.
#pragma once

#include <vector>

#include "tts/config/field.h"

namespace tts::config {

// The generator's residual block: "1" (three dilated convolution pairs, V1 and V2) or "2" (two
// dilated convolutions, V3).
enum class HifiganResblock { k1, k2 };
TTS_CHOICE_NAMES(HifiganResblock, {HifiganResblock::k1, "1"}, {HifiganResblock::k2, "2"});

// Ceilings no real HiFi-GAN reaches (they size the generator's weights and a batch's audio).
// Upsampling stages and residual kernels: jik876's configs have 3 to 4 and 3.
inline constexpr int kMaxHifiganStages = 16;
// Samples of one training segment: jik876 trains on 8192.
inline constexpr int kMaxSegmentSize = 1 << 20;

struct HifiganOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  HifiganResblock resblock = HifiganResblock::k1;
  std::vector<int> upsample_rates{8, 8, 2, 2};
  std::vector<int> upsample_kernel_sizes{16, 16, 4, 4};
  int upsample_initial_channel = 512;
  std::vector<int> resblock_kernel_sizes{3, 7, 11};
  std::vector<std::vector<int>> resblock_dilation_sizes{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}};
  int segment_size = 8192;
  double fmax_for_loss = 0;
  int discriminator_divisor = 1;

  template <class V>
  void visit(V& v) {
    v("resblock", resblock, "residual block type: \"1\" (V1, V2) or \"2\" (V3)");
    v("upsample_rates", upsample_rates,
      "the generator's transposed-convolution strides; their product is audio.hop_length");
    v("upsample_kernel_sizes", upsample_kernel_sizes, "their kernels, one per rate");
    v("upsample_initial_channel", upsample_initial_channel,
      "channels after the input convolution, halved at each upsampling");
    v("resblock_kernel_sizes", resblock_kernel_sizes, "kernel of each parallel residual block");
    v("resblock_dilation_sizes", resblock_dilation_sizes,
      "dilations of each residual block's convolutions (3 each for resblock 1, 2 for resblock 2)");
    v("segment_size", segment_size,
      "samples of audio per training item, cut at random (a multiple of audio.hop_length)");
    v("fmax_for_loss", fmax_for_loss,
      "highest mel filter edge of the mel loss, Hz; 0: sample_rate / 2 (jik876's null)");
    v("discriminator_divisor", discriminator_divisor,
      "1, 2, 4 or 8: divides every hidden width of the discriminators (1: jik876's 70 M "
      "parameters; 8: ~1 M, for CPU tests); a checkpoint or import must match it");
  }
  void validate() const;
};

}  // namespace tts::config
