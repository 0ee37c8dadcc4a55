#!/usr/bin/env python3
"""r9y9/wavenet_vocoder's incremental_forward on one thread, at the sizes of bench_wavenet_generate.

  wavenet_r9y9_generate.py WAVENET_CHECKOUT [FRAMES] [BATCH] [REPEATS]

r9y9's default network (hparams.py: 24 layers, 4 stacks, 128/256/128 channels, Logistic mixture of
10, 80 mels, upsample scales [4, 4, 4, 4], cin_pad 2), random weights, weight norm removed first as
its synthesis.py does (make_generation_fast_). Prints the best of REPEATS runs.
"""
import sys
import time

import torch

checkout = sys.argv[1]
frames = int(sys.argv[2]) if len(sys.argv) > 2 else 40
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 1
repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
sys.path.insert(0, checkout)
from wavenet_vocoder import WaveNet  # noqa: E402

torch.set_num_threads(1)
torch.manual_seed(0)
cin_pad = 2
model = WaveNet(out_channels=30, layers=24, stacks=4, residual_channels=128, gate_channels=256,
                skip_out_channels=128, kernel_size=3, dropout=0.0, cin_channels=80, gin_channels=-1,
                upsample_conditional_features=True, upsample_net="ConvInUpsampleNetwork",
                upsample_params={"upsample_scales": [4, 4, 4, 4], "cin_pad": cin_pad, "cin_channels": 80},
                scalar_input=True, output_distribution="Logistic", cin_pad=cin_pad)
model.eval()
model.make_generation_fast_()
c = torch.randn(batch, 80, frames + 2 * cin_pad)
T = frames * 256
best = float("inf")
for _ in range(repeats):
    start = time.perf_counter()
    with torch.no_grad():
        y = model.incremental_forward(c=c, T=T, log_scale_min=-16.0)
    best = min(best, time.perf_counter() - start)
rate = y.numel() / best
print(f"r9y9: batch {batch} x {T} samples, best of {repeats}: {best:.3f} s, {rate:.0f} samples/s, "
      f"real-time factor {22050 / rate:.2f}")
