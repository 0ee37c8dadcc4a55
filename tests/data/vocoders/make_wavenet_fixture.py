#!/usr/bin/env python3
"""WaveNet fixtures of other shapes than wavenet.pth's, made with r9y9/wavenet_vocoder's own code.

  make_wavenet_fixture.py WAVENET_CHECKOUT OUT_DIR --variant NAME [--seed N]

Writes <prefix>.pth (r9y9's train.py layout), <prefix>_hparams.json (r9y9's keys), <prefix>_x.npy
(B,1,T), <prefix>_c.npy (B,num_mels,frames+2*cin_pad), <prefix>_g.npy (speaker ids, when the
variant has a speaker embedding), <prefix>_y_hat.npy (teacher-forced output) and <prefix>_meta.json
(loss: r9y9's summed loss of y_hat[:, :, :-1] against x[:, :, 1:]), prefix = wavenet_<variant>.
Weights are r9y9's init plus noise, so a port that ignores a parameter fails.
"""
import json
import sys

import numpy as np
import torch

VARIANTS = {
    # Normal mixture (2 components), kernel 2, odd upsample scales with a 3-tap mel axis,
    # a speaker embedding, one dilation cycle.
    "normal": dict(output_distribution="Normal", out_channels=6, layers=5, stacks=1,
                   residual_channels=12, gate_channels=20, skip_out_channels=10, kernel_size=2,
                   cin_pad=1, upsample_scales=[2, 3, 5], freq_axis_kernel_size=3, num_mels=20,
                   gin_channels=8, n_speakers=3, log_scale_min=-7.0, frames=9),
    # One Gaussian (2 channels), kernel 4, no mel context, two cycles.
    "gaussian": dict(output_distribution="Normal", out_channels=2, layers=4, stacks=2,
                     residual_channels=8, gate_channels=14, skip_out_channels=6, kernel_size=4,
                     cin_pad=0, upsample_scales=[4, 2], freq_axis_kernel_size=1, num_mels=7,
                     gin_channels=-1, n_speakers=1, log_scale_min=-9.0, frames=11),
    # Logistic mixture of 4, kernel 3, 3 stacks, hop 12.
    "logistic": dict(output_distribution="Logistic", out_channels=12, layers=9, stacks=3,
                     residual_channels=10, gate_channels=16, skip_out_channels=14, kernel_size=3,
                     cin_pad=3, upsample_scales=[3, 4], freq_axis_kernel_size=1, num_mels=13,
                     gin_channels=-1, n_speakers=1, log_scale_min=-11.0, frames=10),
}

wn, out = sys.argv[1:3]
args = sys.argv[3:]
variant = args[args.index("--variant") + 1]
seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
V = VARIANTS[variant]
prefix = f"{out}/wavenet_{variant}"
sys.path.insert(0, wn)
from wavenet_vocoder import WaveNet  # noqa: E402
from wavenet_vocoder.mixture import discretized_mix_logistic_loss, mix_gaussian_loss  # noqa: E402

gen = torch.Generator().manual_seed(seed)
torch.manual_seed(seed)
hop = int(np.prod(V["upsample_scales"]))
upsample_params = {"upsample_scales": V["upsample_scales"], "cin_pad": V["cin_pad"],
                   "cin_channels": V["num_mels"], "freq_axis_kernel_size": V["freq_axis_kernel_size"]}
embedding = V["gin_channels"] > 0
model = WaveNet(out_channels=V["out_channels"], layers=V["layers"], stacks=V["stacks"],
                residual_channels=V["residual_channels"], gate_channels=V["gate_channels"],
                skip_out_channels=V["skip_out_channels"], kernel_size=V["kernel_size"], dropout=0.0,
                cin_channels=V["num_mels"], gin_channels=V["gin_channels"], n_speakers=V["n_speakers"],
                upsample_conditional_features=True, upsample_net="ConvInUpsampleNetwork",
                upsample_params=upsample_params, scalar_input=True,
                use_speaker_embedding=embedding, output_distribution=V["output_distribution"],
                cin_pad=V["cin_pad"])
with torch.no_grad():
    for p in model.parameters():
        p.add_(0.02 * torch.randn(p.shape, generator=gen))
model.eval()
B = 3
frames = V["frames"]
c = torch.randn(B, V["num_mels"], frames + 2 * V["cin_pad"], generator=gen).cumsum(-1) * 0.2
T = frames * hop
x = torch.tanh(torch.randn(B, 1, T, generator=gen).cumsum(-1) * 0.05)
g = torch.randint(0, V["n_speakers"], (B,), generator=gen) if embedding else None
with torch.no_grad():
    y_hat = model(x, c=c, g=g)
    target = x.transpose(1, 2)[:, 1:, :]
    if V["output_distribution"] == "Logistic":
        loss = discretized_mix_logistic_loss(y_hat[:, :, :-1], target, num_classes=65536,
                                             log_scale_min=V["log_scale_min"], reduce=True)
    else:
        loss = mix_gaussian_loss(y_hat[:, :, :-1], target, log_scale_min=V["log_scale_min"],
                                 reduce=True)
torch.save({"state_dict": model.state_dict(), "global_step": 1234, "global_epoch": 5}, f"{prefix}.pth")
np.save(f"{prefix}_x.npy", x.numpy())
np.save(f"{prefix}_c.npy", c.numpy())
np.save(f"{prefix}_y_hat.npy", y_hat.numpy())
if g is not None:
    np.save(f"{prefix}_g.npy", g.numpy())
hp = json.load(open(f"{wn}/egs/mol/conf/mol_wavenet.json"))
hp.update({k: V[k] for k in ("output_distribution", "out_channels", "layers", "stacks", "residual_channels",
                             "gate_channels", "skip_out_channels", "kernel_size", "cin_pad", "num_mels",
                             "gin_channels", "n_speakers", "log_scale_min")},
          cin_channels=V["num_mels"], hop_size=hop, fft_size=4 * hop, win_length=4 * hop, dropout=0.0,
          quantize_channels=65536, input_type="raw", upsample_params=upsample_params)
json.dump(hp, open(f"{prefix}_hparams.json", "w"), indent=1)
json.dump(dict(reference="r9y9/wavenet_vocoder WaveNet", variant=variant, seed=seed, loss=float(loss),
               samples=B * (T - 1)), open(f"{prefix}_meta.json", "w"), indent=1)
print(f"{prefix}: y_hat {tuple(y_hat.shape)}, loss {float(loss):.6f}")
