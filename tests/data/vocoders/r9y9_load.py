#!/usr/bin/env python3
"""Loads an exported WaveNet into r9y9/wavenet_vocoder's own WaveNet, strictly, and runs it.

  r9y9_load.py WAVENET_CHECKOUT CHECKPOINT HPARAMS_JSON X_NPY C_NPY OUT_NPY [G_NPY]

Builds the network as r9y9's train.py build_model does from the hparams (with a speaker embedding
where the state dict has one), load_state_dict(strict=True), and saves forward(x, c, g) to OUT_NPY.
"""
import json
import sys

import numpy as np
import torch

checkout, checkpoint, hparams, x_path, c_path, out_path = sys.argv[1:7]
g_path = sys.argv[7] if len(sys.argv) > 7 else None
sys.path.insert(0, checkout)
from wavenet_vocoder import WaveNet  # noqa: E402

hp = json.load(open(hparams))
state = torch.load(checkpoint, map_location="cpu")["state_dict"]
params = dict(hp["upsample_params"], cin_channels=hp["cin_channels"], cin_pad=hp["cin_pad"])
model = WaveNet(out_channels=hp["out_channels"], layers=hp["layers"], stacks=hp["stacks"],
                residual_channels=hp["residual_channels"], gate_channels=hp["gate_channels"],
                skip_out_channels=hp["skip_out_channels"], cin_channels=hp["cin_channels"],
                gin_channels=hp["gin_channels"], n_speakers=hp["n_speakers"], dropout=hp["dropout"],
                kernel_size=hp["kernel_size"], cin_pad=hp["cin_pad"],
                upsample_conditional_features=hp["upsample_conditional_features"],
                upsample_params=params, scalar_input=hp["input_type"] != "mulaw-quantize",
                use_speaker_embedding="embed_speakers.weight" in state,
                output_distribution=hp["output_distribution"])
model.load_state_dict(state, strict=True)
model.eval()
g = torch.from_numpy(np.load(g_path)).long() if g_path else None
with torch.no_grad():
    y = model(torch.from_numpy(np.load(x_path)), c=torch.from_numpy(np.load(c_path)), g=g)
np.save(out_path, y.numpy())
