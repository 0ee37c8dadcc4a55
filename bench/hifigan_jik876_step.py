#!/usr/bin/env python3
"""jik876/hifi-gan's training step on a synthetic batch, at the sizes `tts-train bench` is given.

  hifigan_jik876_step.py HIFIGAN_CHECKOUT [--config config_v1.json] [--batch 1] [--frames 32]
      [--steps 3] [--threads 1]

The step is train.py's loop body, on the CPU: the generator on the batch's mel, mel_spectrogram of
its output (fmax_for_loss), AdamW on the discriminators (msd and mpd on y and y_g_hat.detach(),
discriminator_loss of each, summed), then AdamW on the generator (generator_loss and feature_loss
of both discriminators, 45 x L1 of the mels). Both optimizers as train.py builds them (lr, betas
[adam_b1, adam_b2], AdamW's default weight decay 0.01); the per-epoch ExponentialLR steps once an
epoch and is left out. jik876's models.py and meldataset.py come from the checkout (matplotlib and
librosa stubbed by tests/data/vocoders/jik876_stubs.py: the filterbank is built once and cached
by mel_spectrogram, so the stub does not change the timing). --config is a file of the checkout
(config_v1.json, config_v2.json, config_v3.json) or a path; --frames mel frames per segment
(x hop_size samples; train.py's segment_size is 8192 = 32 x 256). The audio is noise; the mel is
mel_spectrogram of it, as MelDataset computes it. Prints one JSON line with median_step_s (after
one warm-up step), the phases' medians, and params (generator and both discriminators).
"""
import argparse
import itertools
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("checkout")
parser.add_argument("--config", default="config_v1.json")
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--frames", type=int, default=32, help="mel frames per segment")
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "data", "vocoders"))
import jik876_stubs  # noqa: E402

jik876_stubs.install(args.checkout)
from env import AttrDict  # noqa: E402
from meldataset import mel_spectrogram  # noqa: E402
from models import (Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator,  # noqa: E402
                    discriminator_loss, feature_loss, generator_loss)

config_path = args.config if os.path.exists(args.config) else os.path.join(args.checkout, args.config)
with open(config_path, encoding="utf-8") as f:
    h = AttrDict(json.load(f))

torch.set_num_threads(args.threads)
torch.manual_seed(h.seed)
generator = Generator(h)
mpd = MultiPeriodDiscriminator()
msd = MultiScaleDiscriminator()
optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()), h.learning_rate,
                            betas=[h.adam_b1, h.adam_b2])
generator.train()
mpd.train()
msd.train()

segment = args.frames * h.hop_size
audio = 0.5 * (2 * torch.rand(args.batch, segment) - 1)
x = mel_spectrogram(audio, h.n_fft, h.num_mels, h.sampling_rate, h.hop_size, h.win_size, h.fmin,
                    h.fmax, center=False)
y_mel = mel_spectrogram(audio, h.n_fft, h.num_mels, h.sampling_rate, h.hop_size, h.win_size, h.fmin,
                        h.fmax_for_loss, center=False)
y = audio.unsqueeze(1)


def step():
    t0 = time.perf_counter()
    y_g_hat = generator(x)
    y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), h.n_fft, h.num_mels, h.sampling_rate,
                                  h.hop_size, h.win_size, h.fmin, h.fmax_for_loss)
    optim_d.zero_grad()
    y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
    loss_disc_f, _, _ = discriminator_loss(y_df_hat_r, y_df_hat_g)
    y_ds_hat_r, y_ds_hat_g, _, _ = msd(y, y_g_hat.detach())
    loss_disc_s, _, _ = discriminator_loss(y_ds_hat_r, y_ds_hat_g)
    loss_disc_all = loss_disc_s + loss_disc_f
    loss_disc_all.backward()
    optim_d.step()
    t1 = time.perf_counter()

    optim_g.zero_grad()
    loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45
    y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
    y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
    loss_fm_f = feature_loss(fmap_f_r, fmap_f_g)
    loss_fm_s = feature_loss(fmap_s_r, fmap_s_g)
    loss_gen_f, _ = generator_loss(y_df_hat_g)
    loss_gen_s, _ = generator_loss(y_ds_hat_g)
    loss_gen_all = loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + loss_mel
    loss_gen_all.backward()
    optim_g.step()
    t2 = time.perf_counter()
    return t2 - t0, t1 - t0, t2 - t1, float(loss_gen_all)


step()  # warm-up
times = [step() for _ in range(args.steps)]
params = sum(p.numel() for m in (generator, mpd, msd) for p in m.parameters())
print(json.dumps({
    "median_step_s": round(statistics.median(t[0] for t in times), 6),
    "discriminator_update_s": round(statistics.median(t[1] for t in times), 6),
    "generator_update_s": round(statistics.median(t[2] for t in times), 6),
    "loss": round(times[-1][3], 6),
    "params": params, "batch": args.batch, "frames": args.frames, "samples": segment,
    "steps": args.steps, "threads": torch.get_num_threads(),
    "torch": torch.__version__, "config": os.path.basename(config_path),
}))
