#!/usr/bin/env python3
"""Makes the fixtures of the `evaluate` tests (tests/eval/) and their reference figures.

Run it in a virtual environment outside the repository:
    python3 -m venv VENV && VENV/bin/pip install pymcd librosa pysptk pyworld pocketsphinx numpy soundfile
    VENV/bin/python tests/data/eval/make_fixtures.py tests/data/eval
It speaks short sentences with espeak-ng (22050 Hz 16-bit WAVs), adds a noisy copy, and writes
reference.json: the figures that pysptk, librosa and pymcd compute from exactly those files, with
the analysis settings of docs/evaluate.md (the C++ side must use the same ones).
"""
import json
import math
import subprocess
import sys
from pathlib import Path

import librosa
import librosa.core.pitch
import numpy as np
import pysptk
import soundfile as sf
from scipy.spatial.distance import cdist

SR = 22050
HOP = 256
N_FFT = 1024
ORDER = 13
ALPHA = 0.65
FMIN = 65.0
FMAX = 500.0
YIN_THRESHOLD = 0.1  # librosa.yin's trough threshold (the period pick)
VOICING_THRESHOLD = 0.5  # ours: voiced when a trough of the CMNDF lies below this
TEXT = "The quick brown fox jumps over the lazy dog."
VOICES = {"us_f3": ("en-us+f3", 175), "gb_m2": ("en-gb+m2", 175), "us_f3_slow": ("en-us+f3", 130)}
MCD_CONST = 10.0 / math.log(10.0) * math.sqrt(2.0)


def speak(out: Path, voice: str, speed: int, text: str) -> None:
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(out), text], check=True)


def load(path: Path) -> np.ndarray:
    y, sr = sf.read(str(path), dtype="float64")
    assert sr == SR, (path, sr)
    return y


def mel_cepstra(y: np.ndarray) -> np.ndarray:
    padded = np.pad(y, N_FFT // 2)
    frames = librosa.util.frame(padded, frame_length=N_FFT, hop_length=HOP).T
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)  # periodic Hann
    amplitude = np.abs(np.fft.rfft(frames * window, axis=1))
    return np.stack([pysptk.mcep(a, order=ORDER, alpha=ALPHA, maxiter=0, etype=1, eps=1e-8,
                                 min_det=0.0, itype=3) for a in amplitude])


def dtw_path(ref: np.ndarray, syn: np.ndarray) -> np.ndarray:
    cost = cdist(ref[:, 1:], syn[:, 1:], metric="euclidean")
    _, path = librosa.sequence.dtw(C=cost)  # steps (1,1), (1,0), (0,1), unit weights
    return path[::-1]


def yin_voicing(y: np.ndarray) -> np.ndarray:
    """Our voicing rule on librosa.yin's CMNDF: a local minimum below VOICING_THRESHOLD."""
    frames = librosa.util.frame(np.pad(y, N_FFT // 2), frame_length=N_FFT, hop_length=HOP)
    min_period = int(np.floor(SR / FMAX))
    max_period = min(int(np.ceil(SR / FMIN)), N_FFT - 1)
    cmndf = librosa.core.pitch._cumulative_mean_normalized_difference(frames, min_period, max_period)
    trough = librosa.util.localmin(cmndf, axis=0)
    trough[0, :] = cmndf[0, :] < cmndf[1, :]
    return np.any(trough & (cmndf < VOICING_THRESHOLD), axis=0)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, (voice, speed) in VOICES.items():
        speak(out / f"{name}.wav", voice, speed, TEXT)
    clean = load(out / "us_f3.wav")
    rng = np.random.default_rng(7)
    noisy = clean + rng.normal(0.0, 0.01, clean.shape)
    sf.write(str(out / "us_f3_noisy.wav"), np.clip(noisy, -1, 32767 / 32768), SR, subtype="PCM_16")

    names = list(VOICES) + ["us_f3_noisy"]
    audio = {n: load(out / f"{n}.wav") for n in names}
    files = {}
    cepstra = {}
    for n, y in audio.items():
        cepstra[n] = mel_cepstra(y)
        yin_f0 = librosa.yin(y, fmin=FMIN, fmax=FMAX, sr=SR, frame_length=N_FFT, hop_length=HOP,
                             trough_threshold=YIN_THRESHOLD)
        pyin_f0, pyin_voiced, _ = librosa.pyin(y, fmin=FMIN, fmax=FMAX, sr=SR, frame_length=N_FFT,
                                               hop_length=HOP)
        files[n] = {
            "samples": int(len(y)),
            "frames": int(len(cepstra[n])),
            "mcep_frame_10": cepstra[n][10].tolist(),
            "mcep_frame_mid": cepstra[n][len(cepstra[n]) // 2].tolist(),
            "yin_f0": yin_f0.tolist(),
            "voiced": yin_voicing(y).astype(int).tolist(),
            "pyin_f0": np.nan_to_num(pyin_f0, nan=0.0).tolist(),
            "pyin_voiced": pyin_voiced.astype(int).tolist(),
        }
    from pymcd.mcd import Calculate_MCD
    pymcd = Calculate_MCD(MCD_mode="dtw")
    pairs = []
    for ref, syn in [("us_f3", "gb_m2"), ("us_f3", "us_f3_slow"), ("us_f3", "us_f3_noisy"),
                     ("gb_m2", "us_f3_slow"), ("us_f3", "us_f3")]:
        path = dtw_path(cepstra[ref], cepstra[syn])
        diff = cepstra[ref][path[:, 0], 1:] - cepstra[syn][path[:, 1], 1:]
        mcd = MCD_CONST * np.mean(np.sqrt(np.sum(diff ** 2, axis=1)))
        vr = np.array(files[ref]["voiced"], bool)[path[:, 0]]
        vs = np.array(files[syn]["voiced"], bool)[path[:, 1]]
        fr = np.array(files[ref]["yin_f0"])[path[:, 0]]
        fs = np.array(files[syn]["yin_f0"])[path[:, 1]]
        both = vr & vs
        pairs.append({
            "reference": ref, "synthesized": syn, "mcd_db": float(mcd),
            "path_length": int(len(path)),
            "f0_rmse_hz": float(np.sqrt(np.mean((fr[both] - fs[both]) ** 2))) if both.any() else 0.0,
            "vde": float(np.mean(vr != vs)),
            "pymcd_dtw_db": float(pymcd.calculate_mcd(str(out / f"{ref}.wav"), str(out / f"{syn}.wav"))),
        })
    versions = {}
    for package in ["librosa", "pysptk", "pymcd", "numpy", "scipy", "soundfile", "pocketsphinx",
                    "pyworld", "fastdtw"]:
        from importlib.metadata import version
        versions[package] = version(package)
    versions["espeak-ng"] = subprocess.run(["espeak-ng", "--version"], capture_output=True,
                                           text=True).stdout.split(":")[1].split("Data")[0].strip()
    settings = {"sample_rate": SR, "hop": HOP, "n_fft": N_FFT, "order": ORDER, "alpha": ALPHA,
                "fmin": FMIN, "fmax": FMAX, "yin_threshold": YIN_THRESHOLD,
                "voicing_threshold": VOICING_THRESHOLD, "text": TEXT}
    reference = {"versions": versions, "settings": settings, "files": files, "pairs": pairs}
    (out / "reference.json").write_text(json.dumps(reference, indent=1) + "\n")
    for p in pairs:
        print(p)


if __name__ == "__main__":
    main()
