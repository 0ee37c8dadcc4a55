#!/usr/bin/env python3
"""NumPy stand-in for librosa: the feature pipeline of bench/features_bench.cpp in plain NumPy.

Usage: python3 bench/features_baseline.py WAV_DIR
Times the clips of 6-8 s in WAV_DIR (16-bit mono, 22050 Hz) one by one, for NVIDIA's and
Rayhane-mamah's audio settings, and prints ms/clip, clips/s and the real-time factor of each.
Trim (frame RMS), pre-emphasis, centred framed STFT with np.fft.rfft (librosa.stft's method),
|.|^p, a dense mel product, compression; no linear target. docs/benchmarks.md ("Feature
extraction") compares it with ours.
"""
import glob, sys, time, wave
import numpy as np

def load(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0

def frame(x, n, hop):
    count = 1 + (len(x) - n) // hop
    return np.lib.stride_tricks.as_strided(x, (count, n), (x.strides[0] * hop, x.strides[0]))

def trim(y, top_db, fl=2048, hop=512):
    p = np.pad(y, fl // 2)
    rms = np.sqrt(np.mean(frame(p, fl, hop) ** 2, axis=1))
    db = 20 * np.log10(np.maximum(1e-5, rms)) - 20 * np.log10(max(1e-5, rms.max()))
    nz = np.flatnonzero(db > -top_db)
    return y[nz[0] * hop: min(len(y), (nz[-1] + 1) * hop)]

def hann(win, n_fft):
    w = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win) / win)).astype(np.float32)
    l = (n_fft - win) // 2
    return np.pad(w, (l, n_fft - win - l))

def features(y, c, basis, window):
    x = trim(y, c["top_db"])
    if c["pre"]:
        x = np.append(x[0], x[1:] - c["pre"] * x[:-1]).astype(np.float32)
    x = np.pad(x, c["n_fft"] // 2, mode=c["pad"])
    spec = np.fft.rfft(window * frame(x, c["n_fft"], c["hop"]), axis=1).astype(np.complex64)
    mag = np.abs(spec) ** c["power"]
    mel = mag @ basis.T
    if c["db"]:
        d = 20 * np.log10(np.maximum(1e-5, mel)) - 20
        return np.clip(8 * (d + 100) / 100 - 4, -4, 4)
    return np.log(np.maximum(mel, 1e-5))

configs = {
    "nvidia": dict(n_fft=1024, hop=256, win=1024, pad="reflect", power=1, pre=0, db=False, top_db=60, n_bins=513),
    "rayhane": dict(n_fft=2048, hop=275, win=1100, pad="constant", power=2, pre=0.97, db=True, top_db=40, n_bins=1025),
}
clips = [y for y in map(load, sorted(glob.glob(sys.argv[1] + "/*.wav"))) if 6 <= len(y) / 22050 <= 8]
seconds = sum(len(y) for y in clips) / 22050
print(f"{len(clips)} clips, {seconds:.1f} s of audio, numpy {np.__version__}")
for name, c in configs.items():
    basis = np.random.rand(80, c["n_bins"]).astype(np.float32)  # a dense stand-in for the mel basis
    window = hann(c["win"], c["n_fft"])
    start = time.perf_counter()
    for y in clips:
        features(y, c, basis, window)
    t = time.perf_counter() - start
    print(f"{name}: {1e3 * t / len(clips):.2f} ms/clip, {len(clips) / t:.1f} clips/s, RTF {t / seconds:.5f}")
