#!/usr/bin/env python3
"""A generator parity fixture made with jik876/hifi-gan's own Generator.

  make_hifigan_generator.py HIFIGAN_CHECKOUT OUT_DIR --seed N --resblock 1|2 --rates 5,5,4
      --kernels 11,11,8 --initial 48 --res-kernels 3,7 --dilations 1,3,5/1,3,5 --n-mels 64

Writes, in the layout of the shared reference fixture (make_vocoder_fixtures.py): hifigan_g.pt
({'generator': state_dict}, weight norm as weight_g / weight_v), hifigan_config.json (config_v1's
keys), hifigan_mel.npy [2, n_mels, 23] and hifigan_audio.npy [2, 1, 23 * hop] = Generator(h)(mel)
in eval mode, hifigan_meta.json. Weights are jik876's initialization plus noise (weight_g too).
"""
import argparse
import json
import os

import numpy as np
import torch

import jik876_stubs

p = argparse.ArgumentParser()
p.add_argument("checkout")
p.add_argument("out")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--resblock", default="1")
p.add_argument("--rates", default="5,5,4")
p.add_argument("--kernels", default="11,11,8")
p.add_argument("--initial", type=int, default=48)
p.add_argument("--res-kernels", default="3,7")
p.add_argument("--dilations", default="1,3,5/1,3,5")
p.add_argument("--n-mels", type=int, default=64)
a = p.parse_args()

jik876_stubs.install(a.checkout)
import models  # noqa: E402
from env import AttrDict  # noqa: E402

ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
h = AttrDict(resblock=a.resblock, upsample_rates=ints(a.rates), upsample_kernel_sizes=ints(a.kernels),
             upsample_initial_channel=a.initial, resblock_kernel_sizes=ints(a.res_kernels),
             resblock_dilation_sizes=[ints(d) for d in a.dilations.split("/")], num_mels=a.n_mels)
hop = int(np.prod(h.upsample_rates))
torch.manual_seed(a.seed)
gen = torch.Generator().manual_seed(a.seed)
g = jik876_stubs.generator(models, h)
with torch.no_grad():
    for param in g.parameters():
        param.add_(0.02 * torch.randn(param.shape, generator=gen))
g.eval()
frames = 23
mel = torch.randn(2, h.num_mels, frames + 8, generator=gen).cumsum(-1) * 0.3
mel = (torch.nn.functional.avg_pool1d(mel, 9, 1) - 6.0).clamp(-11.5, 2.0)
with torch.no_grad():
    audio = g(mel)
os.makedirs(a.out, exist_ok=True)
torch.save({"generator": g.state_dict()}, f"{a.out}/hifigan_g.pt")
np.save(f"{a.out}/hifigan_mel.npy", mel.numpy())
np.save(f"{a.out}/hifigan_audio.npy", audio.numpy())
cfg = json.load(open(f"{a.checkout}/config_v1.json"))
cfg.update(dict(h), hop_size=hop, win_size=4 * hop, n_fft=4 * hop, num_freq=2 * hop + 1, seed=a.seed,
           segment_size=32 * hop)
json.dump(cfg, open(f"{a.out}/hifigan_config.json", "w"), indent=1)
json.dump(dict(reference="jik876/hifi-gan models.Generator", seed=a.seed,
               params=sum(x.numel() for x in g.parameters()), mel_shape=list(mel.shape),
               audio_shape=list(audio.shape)), open(f"{a.out}/hifigan_meta.json", "w"), indent=1)
print(f"{a.out}: {sum(x.numel() for x in g.parameters())} params, audio {tuple(audio.shape)}")
