#!/usr/bin/env python3
"""jik876/hifi-gan's inference at the sizes of bench_hifigan_generate.

  hifigan_jik876_generate.py HIFIGAN_CHECKOUT CONFIG_JSON [FRAMES] [REPEATS] [THREADS]

As its inference.py runs the generator: Generator(h), eval(), remove_weight_norm(), then the
generator on a mel under torch.no_grad(). Initial weights (torch.manual_seed(0)), a random mel of
FRAMES frames (default 200), the best of REPEATS runs (default 3) after one warm-up, THREADS
intra-op threads (default 1). CONFIG_JSON is a file of the checkout (config_v1.json) or a path.
"""
import json
import os
import sys
import time

import torch

checkout, config = sys.argv[1:3]
frames = int(sys.argv[3]) if len(sys.argv) > 3 else 200
repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
threads = int(sys.argv[5]) if len(sys.argv) > 5 else 1
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "data", "vocoders"))
import jik876_stubs  # noqa: E402

jik876_stubs.install(checkout)
from env import AttrDict  # noqa: E402
from models import Generator  # noqa: E402

path = config if os.path.exists(config) else os.path.join(checkout, config)
with open(path, encoding="utf-8") as f:
    h = AttrDict(json.load(f))
torch.set_num_threads(threads)
torch.manual_seed(0)
generator = Generator(h)
generator.eval()
generator.remove_weight_norm()
mel = torch.randn(1, h.num_mels, frames)
best, samples = float("inf"), 0
with torch.no_grad():
    for run in range(repeats + 1):
        start = time.perf_counter()
        samples = generator(mel).numel()
        if run > 0:  # run 0 warms up
            best = min(best, time.perf_counter() - start)
rate = samples / best
print(f"jik876: {samples} samples, {torch.get_num_threads()} thread(s), best of {repeats}: "
      f"{best:.3f} s, {rate:.0f} samples/s, real-time factor {h.sampling_rate / rate:.3f}")
