"""Imports jik876/hifi-gan's modules without its plotting and audio dependencies.

matplotlib (utils.py plots spectrograms) is replaced by an empty module; librosa (meldataset.py)
by librosa.filters.mel (the slaney filterbank of librosa 0.10, htk=False, norm='slaney', here in
numpy) and librosa.util.normalize; scipy (meldataset.py reads wav files with scipy.io.wavfile), where
it is not installed, by a module whose read() refuses (nothing here reads wav files). On PyTorch 2,
whose torch.stft requires return_complex for real input, a call without it (meldataset.py's, written
for PyTorch 1.x) gets what PyTorch 1.x returned: view_as_real of the complex result. Nothing of
jik876's own code is changed.
"""
import sys
import types

import numpy as np


def _hz_to_mel(f):
    f = np.asanyarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, mels)


def _mel_to_hz(m):
    m = np.asanyarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def mel(sr, n_fft, n_mels=128, fmin=0.0, fmax=None, *args, **kwargs):
    sr = kwargs.get("sr", sr)
    if fmax is None:
        fmax = float(sr) / 2
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, np.newaxis]
    return weights.astype(np.float32)


def normalize(x, axis=0):
    return x / np.max(np.abs(x), axis=axis, keepdims=True)


def install(checkout):
    if "matplotlib" not in sys.modules:
        m = types.ModuleType("matplotlib")
        m.use = lambda *a, **k: None
        m.pylab = types.ModuleType("matplotlib.pylab")
        sys.modules["matplotlib"] = m
        sys.modules["matplotlib.pylab"] = m.pylab
    if "librosa" not in sys.modules:
        lib = types.ModuleType("librosa")
        lib.filters = types.ModuleType("librosa.filters")
        lib.filters.mel = mel
        lib.util = types.ModuleType("librosa.util")
        lib.util.normalize = normalize
        sys.modules.update({"librosa": lib, "librosa.filters": lib.filters, "librosa.util": lib.util})
    try:
        import scipy.io.wavfile  # noqa: F401
    except ImportError:
        def read(path):
            raise RuntimeError(f"jik876_stubs: no scipy to read {path}")
        sp = types.ModuleType("scipy")
        sp.io = types.ModuleType("scipy.io")
        sp.io.wavfile = types.ModuleType("scipy.io.wavfile")
        sp.io.wavfile.read = read
        sys.modules.update({"scipy": sp, "scipy.io": sp.io, "scipy.io.wavfile": sp.io.wavfile})
    _stft_as_pytorch_1()
    sys.path.insert(0, checkout)


def _stft_as_pytorch_1():
    import torch
    if getattr(torch.stft, "_jik876_compat", False):
        return
    original = torch.stft

    def stft(*args, **kwargs):
        if "return_complex" in kwargs:
            return original(*args, **kwargs)
        return torch.view_as_real(original(*args, return_complex=True, **kwargs))

    stft._jik876_compat = True
    torch.stft = stft


def generator(models, h):
    """jik876's Generator(h); its Conv1d(80, ...) reads h.num_mels channels when that is not 80."""
    if h.num_mels == 80:
        return models.Generator(h)
    orig = models.Conv1d
    models.Conv1d = lambda i, *a, **k: orig(h.num_mels if i == 80 else i, *a, **k)
    try:
        return models.Generator(h)
    finally:
        models.Conv1d = orig
