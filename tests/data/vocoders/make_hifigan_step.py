#!/usr/bin/env python3
"""One full training step of jik876/hifi-gan (train.py's inner loop), for parity checks.

  make_hifigan_step.py HIFIGAN_CHECKOUT OUT_DIR

Imports jik876's models.py and meldataset.py from HIFIGAN_CHECKOUT (matplotlib and librosa stubbed
by jik876_stubs.py) and runs train.py's loop body once on the CPU, train mode, on a small
generator config (config.json) and jik876's full-size discriminators:
AdamW(lr, betas=[adam_b1, adam_b2]) (weight decay 0.01, its default) over the generator, and over
msd then mpd; optim_d steps on loss_disc_s + loss_disc_f with y_g_hat.detach(), then optim_g on
loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + 45 * L1(y_mel, mel of y_g_hat).

Initial weights come from a formula (weights_from_formula below, repeated in
tests/support/hifigan_fixture.h), so the discriminators' 70 M parameters need not be stored: per
tensor named P (generator./mpd./msd. + its state-dict key), element i is
  scale * (2 u_i - 1), u_i = splitmix64(i * 0x9E3779B97F4A7C15 + fnv1a32(P)) >> 40, / 2^24
with scale 1 / sqrt(numel / size(0)) for weight_v and weight_orig of rank >= 2, 0.2 around 0.6 for
weight_g (0.6 + 0.2 (2u - 1)), 0.05 for biases and 1 for spectral norm's vectors weight_u and
weight_v (1-D; their scale is normalized away by the first power iteration).

The audio is a fixed mixture of tones and noise (seed 1234), peak-normalized to 0.95 as
meldataset.py does; mel = mel_spectrogram(audio, ..., fmax), y_mel = mel_spectrogram(audio, ...,
fmax_for_loss), as MelDataset computes them.

Writes OUT_DIR/config.json (jik876's keys) and OUT_DIR/step.pt, a dict of:
  mel [B, n_mels, frames], audio [B, 1, segment], y_mel, y_g_hat (the generator's output),
  loss_* (every term of train.py, float), mel_v1.audio [2, 4096] with mel_v1.fmax_8000 and
  mel_v1.fmax_none (mel_spectrogram at config_v1's audio settings, fmax 8000 and None), msd_eval_scores.N (MSD scores in eval mode before the
  step), d_scores.{mpd,msd}.{real,fake}.N and d_features.{mpd,msd}.{real,fake}.N.M.{sum,abs}
  (the first discriminator pass: scores whole, features as sums) with generator_loss / feature_loss
  of that pass (check_gen_*, check_fm_*),
  generator.before.KEY and generator.after.KEY (every tensor),
  {mpd,msd}.after.KEY.{delta_sum,delta_abs,samples} (the discriminators after the step: the sum and
  absolute sum of after - before in float64, and 32 elements at flat indices
  floor(j * numel / 32)), msd.after.KEY for the spectral-norm buffers weight_u / weight_v whole.
"""
import itertools
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import jik876_stubs

checkout, out = sys.argv[1:3]
jik876_stubs.install(checkout)
import models  # noqa: E402
from env import AttrDict  # noqa: E402
from meldataset import mel_spectrogram  # noqa: E402
from models import Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator, feature_loss, generator_loss, \
    discriminator_loss  # noqa: E402

M64 = (1 << 64) - 1


def fnv1a32(text):
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def uniform(name, n):
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(fnv1a32(name))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)


def weights_from_formula(module, prefix):
    with torch.no_grad():
        for key, t in module.state_dict(keep_vars=True).items():
            name = prefix + key
            u = 2 * uniform(name, t.numel()) - 1
            last = key.rsplit(".", 1)[-1]
            if last in ("weight_u", "weight_v") and t.dim() == 1:
                value = u
            elif last in ("weight_v", "weight_orig"):
                value = u / np.sqrt(t.numel() / t.shape[0])
            elif last == "weight_g":
                value = 0.6 + 0.2 * u
            elif last == "bias":
                value = 0.05 * u
            else:
                raise SystemExit(f"no formula for {name}")
            t.copy_(torch.from_numpy(value.astype(np.float32).reshape(t.shape)))


h = AttrDict(resblock="1", num_gpus=0, batch_size=2, learning_rate=0.0002, adam_b1=0.8, adam_b2=0.99,
             lr_decay=0.999, seed=1234, upsample_rates=[4, 4, 2], upsample_kernel_sizes=[8, 8, 4],
             upsample_initial_channel=32, resblock_kernel_sizes=[3, 5],
             resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]], segment_size=2048, num_mels=20, num_freq=65,
             n_fft=128, hop_size=32, win_size=128, sampling_rate=8000, fmin=0, fmax=3000, fmax_for_loss=None,
             num_workers=0, dist_config={"dist_backend": "gloo", "dist_url": "tcp://localhost:54321",
                                         "world_size": 1})
torch.manual_seed(h.seed)
device = torch.device("cpu")

generator = jik876_stubs.generator(models, h).to(device)
mpd = MultiPeriodDiscriminator().to(device)
msd = MultiScaleDiscriminator().to(device)
weights_from_formula(generator, "generator.")
weights_from_formula(mpd, "mpd.")
weights_from_formula(msd, "msd.")
before = {p: {k: v.clone() for k, v in m.state_dict().items()} for p, m in
          (("generator", generator), ("mpd", mpd), ("msd", msd))}

# The batch, as MelDataset makes it.
rng = np.random.RandomState(1234)
t = np.arange(h.segment_size) / h.sampling_rate
audio = np.stack([np.sin(2 * np.pi * f0 * t) + 0.5 * np.sin(2 * np.pi * 2.7 * f0 * t + 1.0)
                  + 0.1 * rng.randn(h.segment_size) for f0 in (220.0, 347.0)])
audio = 0.95 * audio / np.max(np.abs(audio), axis=1, keepdims=True)
audio = torch.FloatTensor(audio)
x = mel_spectrogram(audio, h.n_fft, h.num_mels, h.sampling_rate, h.hop_size, h.win_size, h.fmin, h.fmax,
                    center=False)
y_mel = mel_spectrogram(audio, h.n_fft, h.num_mels, h.sampling_rate, h.hop_size, h.win_size, h.fmin,
                        h.fmax_for_loss, center=False)
y = audio

saved = {}
msd.eval()
with torch.no_grad():
    for i, s in enumerate(msd(y.unsqueeze(1), y.unsqueeze(1).flip(-1))[1]):
        saved[f"msd_eval_scores.{i}"] = s.clone()
msd.train()


def record_pass(tag, outputs):
    y_d_rs, y_d_gs, fmap_rs, fmap_gs = outputs
    for side, scores, fmaps in (("real", y_d_rs, fmap_rs), ("fake", y_d_gs, fmap_gs)):
        for i, s in enumerate(scores):
            saved[f"d_scores.{tag}.{side}.{i}"] = s.detach().clone()
        for i, layers in enumerate(fmaps):
            for j, f in enumerate(layers):
                saved[f"d_features.{tag}.{side}.{i}.{j}.sum"] = float(f.detach().double().sum())
                saved[f"d_features.{tag}.{side}.{i}.{j}.abs"] = float(f.detach().double().abs().sum())
    with torch.no_grad():
        saved[f"check_gen_{tag}"] = float(generator_loss(y_d_gs)[0])
        saved[f"check_fm_{tag}"] = float(feature_loss(fmap_rs, fmap_gs))


# train.py's loop body (rank 0, one GPU's branch, on the CPU).
optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()),
                            h.learning_rate, betas=[h.adam_b1, h.adam_b2])
generator.train()
mpd.train()
msd.train()

x = torch.autograd.Variable(x.to(device, non_blocking=True))
y = torch.autograd.Variable(y.to(device, non_blocking=True))
y_mel = torch.autograd.Variable(y_mel.to(device, non_blocking=True))
y = y.unsqueeze(1)

y_g_hat = generator(x)
y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), h.n_fft, h.num_mels, h.sampling_rate, h.hop_size, h.win_size,
                              h.fmin, h.fmax_for_loss)

optim_d.zero_grad()

# MPD
mpd_out = mpd(y, y_g_hat.detach())
y_df_hat_r, y_df_hat_g, _, _ = mpd_out
loss_disc_f, losses_disc_f_r, losses_disc_f_g = discriminator_loss(y_df_hat_r, y_df_hat_g)

# MSD
msd_out = msd(y, y_g_hat.detach())
y_ds_hat_r, y_ds_hat_g, _, _ = msd_out
loss_disc_s, losses_disc_s_r, losses_disc_s_g = discriminator_loss(y_ds_hat_r, y_ds_hat_g)

loss_disc_all = loss_disc_s + loss_disc_f

loss_disc_all.backward()
optim_d.step()
record_pass("mpd", mpd_out)
record_pass("msd", msd_out)

# Generator
optim_g.zero_grad()

# L1 Mel-Spectrogram Loss
loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45

y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
loss_fm_f = feature_loss(fmap_f_r, fmap_f_g)
loss_fm_s = feature_loss(fmap_s_r, fmap_s_g)
loss_gen_f, losses_gen_f = generator_loss(y_df_hat_g)
loss_gen_s, losses_gen_s = generator_loss(y_ds_hat_g)
loss_gen_all = loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + loss_mel

loss_gen_all.backward()
optim_g.step()

# What the step produced.
saved.update(mel=x.clone(), audio=y.clone(), y_mel=y_mel.clone(), y_g_hat=y_g_hat.detach().clone())
for name, value in dict(loss_disc_f=loss_disc_f, loss_disc_s=loss_disc_s, loss_disc_all=loss_disc_all,
                        loss_mel=loss_mel, loss_fm_f=loss_fm_f, loss_fm_s=loss_fm_s, loss_gen_f=loss_gen_f,
                        loss_gen_s=loss_gen_s, loss_gen_all=loss_gen_all).items():
    saved[name] = float(value)
for key, value in before["generator"].items():
    saved[f"generator.before.{key}"] = value
for key, value in generator.state_dict().items():
    saved[f"generator.after.{key}"] = value.clone()
for prefix, module in (("mpd", mpd), ("msd", msd)):
    for key, value in module.state_dict().items():
        if value.dim() == 1 and key.rsplit(".", 1)[-1] in ("weight_u", "weight_v"):
            saved[f"{prefix}.after.{key}"] = value.clone()
            continue
        delta = value.double() - before[prefix][key].double()
        flat = value.reshape(-1)
        saved[f"{prefix}.after.{key}.delta_sum"] = float(delta.sum())
        saved[f"{prefix}.after.{key}.delta_abs"] = float(delta.abs().sum())
        saved[f"{prefix}.after.{key}.samples"] = flat[[j * flat.numel() // 32 for j in range(32)]].clone()

# meldataset.mel_spectrogram at config_v1's audio settings, fmax 8000 and None (sample_rate / 2).
t = np.arange(4096) / 22050
wave = torch.FloatTensor(np.stack([0.6 * np.sin(2 * np.pi * 440.0 * t) + 0.05 * rng.randn(4096),
                                   0.3 * np.sin(2 * np.pi * 3100.0 * t) * np.sin(2 * np.pi * 3.0 * t)]))
saved["mel_v1.audio"] = wave
saved["mel_v1.fmax_8000"] = mel_spectrogram(wave, 1024, 80, 22050, 256, 1024, 0, 8000)
saved["mel_v1.fmax_none"] = mel_spectrogram(wave, 1024, 80, 22050, 256, 1024, 0, None)

os.makedirs(out, exist_ok=True)
torch.save(saved, f"{out}/step.pt")
json.dump(dict(h), open(f"{out}/config.json", "w"), indent=1)
print(f"{out}/step.pt: {len(saved)} entries; loss_disc_all {float(loss_disc_all):.6f}, "
      f"loss_gen_all {float(loss_gen_all):.6f}, loss_mel {float(loss_mel):.6f}")
