#!/usr/bin/env python3
"""r9y9/wavenet_vocoder's training step on a synthetic batch, at the sizes `tts-train bench` is given.

  wavenet_r9y9_step.py WAVENET_CHECKOUT [--layers 24] [--stacks 4] [--residual 512] [--gate 512]
      [--skip 256] [--batch 1] [--frames 8] [--steps 3] [--threads 1] [--ema-decay 0.9999]

The step is train.py's __train_step for raw input and a mixture of logistics: model(x, c) in train
mode, its masked DiscretizedMixturelogisticLoss over y_hat[:, :, :-1] against x[1:] (every sample
real here), backward, Adam (its optimizer_params: lr 1e-3, eps 1e-8, no weight decay; no clip, as
clip_thresh -1), then its ExponentialMovingAverage update of every parameter. r9y9's WaveNet and
discretized_mix_logistic_loss come from the checkout; train.py itself needs its data pipeline and
is not imported. Defaults are egs/mol/conf/mol_wavenet.json's network (80 mels, upsample scales
[4, 4, 4, 4], cin_pad 2, 10 logistics, log_scale_min -9, 65536 classes). Prints one JSON line with
median_step_s (after one warm-up step) and params.
"""
import argparse
import json
import statistics
import sys
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("checkout")
parser.add_argument("--layers", type=int, default=24)
parser.add_argument("--stacks", type=int, default=4)
parser.add_argument("--residual", type=int, default=512)
parser.add_argument("--gate", type=int, default=512)
parser.add_argument("--skip", type=int, default=256)
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--frames", type=int, default=8, help="mel frames per window (x 256 samples)")
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--ema-decay", type=float, default=0.9999)
args = parser.parse_args()

sys.path.insert(0, args.checkout)
from wavenet_vocoder import WaveNet  # noqa: E402
from wavenet_vocoder.mixture import discretized_mix_logistic_loss  # noqa: E402

torch.set_num_threads(args.threads)
torch.manual_seed(0)
cin_pad, hop, n_mels = 2, 256, 80
model = WaveNet(out_channels=30, layers=args.layers, stacks=args.stacks,
                residual_channels=args.residual, gate_channels=args.gate,
                skip_out_channels=args.skip, kernel_size=3, dropout=0.0, cin_channels=n_mels,
                gin_channels=-1, upsample_conditional_features=True,
                upsample_net="ConvInUpsampleNetwork",
                upsample_params={"upsample_scales": [4, 4, 4, 4], "cin_pad": cin_pad,
                                 "cin_channels": n_mels},
                scalar_input=True, output_distribution="Logistic", cin_pad=cin_pad)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                             weight_decay=0.0, amsgrad=False)
shadow = {name: p.data.clone() for name, p in model.named_parameters() if p.requires_grad}

T = args.frames * hop
x = torch.rand(args.batch, 1, T) - 0.5
c = torch.randn(args.batch, n_mels, args.frames + 2 * cin_pad)
y = x.transpose(1, 2).contiguous()  # (B, T, 1), train.py's target
mask = torch.ones(args.batch, T, 1)[:, 1:, :]


def step():
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = 1e-3  # train.py sets the schedule's rate each step
    optimizer.zero_grad()
    y_hat = model(x, c, None, False)
    losses = discretized_mix_logistic_loss(y_hat[:, :, :-1], y[:, 1:, :], num_classes=65536,
                                           log_scale_min=-9.0, reduce=False)
    mask_ = mask.expand_as(y[:, 1:, :])
    loss = (losses * mask_).sum() / mask_.sum()
    loss.backward()
    optimizer.step()
    for name, param in model.named_parameters():
        if name in shadow:
            shadow[name] -= (1.0 - args.ema_decay) * (shadow[name] - param.data)
    return float(loss.item())


times = []
loss = 0.0
for i in range(args.steps + 1):
    start = time.perf_counter()
    loss = step()
    if i > 0:
        times.append(time.perf_counter() - start)
print(json.dumps({"median_step_s": statistics.median(times), "params": sum(
    p.numel() for p in model.parameters()), "samples_per_s": args.batch * T /
    statistics.median(times), "loss": loss, "batch": args.batch, "samples": T,
    "threads": torch.get_num_threads(), "torch": torch.__version__}))
