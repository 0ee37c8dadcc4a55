"""Imports NVIDIA/tacotron2's code from a checkout outside this repository, for the CPU.

Used by bench/nvidia_step.py (step times) and bench/nvidia_race.py (training to alignment). What it
changes, and nothing else: `tensorflow` (hparams.py imports it for HParams, which we do not use)
and, where librosa is not installed, `librosa` (layers.py and stft.py import it for the mel
filterbank of audio preprocessing, which training never calls) are stub modules; and
`get_mask_from_lengths`, which builds its mask with `torch.cuda.LongTensor`, is the same mask
built on the CPU. torch is imported before the stubs, and the librosa stub refuses dunder
lookups: PyTorch 2.x's import and library registration inspect loaded modules.
"""
import importlib.machinery
import sys
import types

import torch  # before the stubs below: PyTorch 2.x's import probes modules such as tensorflow


def _stub_module(name):  # with a spec: PyTorch 2.x's lazy imports call importlib.util.find_spec
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return module


def _cpu_mask(lengths):
    max_len = int(torch.max(lengths).item())
    return torch.arange(0, max_len) < lengths.unsqueeze(1)


def load(peer_dir):
    """Imports the checkout's modules; returns a namespace with model, loss_function, data_utils,
    text (its text_to_sequence and symbols)."""
    sys.path.insert(0, peer_dir)
    sys.modules.setdefault("tensorflow", _stub_module("tensorflow"))
    try:
        import librosa.filters, librosa.util  # noqa: F401,E401
    except ImportError:
        for name in ("librosa", "librosa.filters", "librosa.util"):
            stub = _stub_module(name)

            def stub_attr(attr, name=name):
                if attr.startswith("__"):  # module protocol lookups (torch 2.x inspects modules)
                    raise AttributeError(attr)
                return lambda *a, **k: (_ for _ in ()).throw(RuntimeError(f"{name}.{attr}: stub"))
            stub.__getattr__ = stub_attr
            sys.modules[name] = stub
    import utils
    utils.get_mask_from_lengths = _cpu_mask
    import model
    model.get_mask_from_lengths = _cpu_mask
    import data_utils
    import loss_function
    import text
    return types.SimpleNamespace(model=model, loss_function=loss_function, data_utils=data_utils,
                                 text=text)


def hparams(n_symbols, **overrides):
    """The model hyperparameters of NVIDIA's hparams.py (its defaults), with `overrides`."""
    hp = dict(mask_padding=True, fp16_run=False, n_mel_channels=80, n_symbols=n_symbols,
              symbols_embedding_dim=512, encoder_kernel_size=5, encoder_n_convolutions=3,
              encoder_embedding_dim=512, n_frames_per_step=1, decoder_rnn_dim=1024, prenet_dim=256,
              max_decoder_steps=1000, gate_threshold=0.5, p_attention_dropout=0.1,
              p_decoder_dropout=0.1, attention_rnn_dim=1024, attention_dim=128,
              attention_location_n_filters=32, attention_location_kernel_size=31,
              postnet_embedding_dim=512, postnet_kernel_size=5, postnet_n_convolutions=5)
    unknown = sorted(set(overrides) - set(hp))
    if unknown:
        raise ValueError(f"not one of NVIDIA's model hyperparameters: {', '.join(unknown)}")
    hp.update(overrides)
    return types.SimpleNamespace(**hp)
