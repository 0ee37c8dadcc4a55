#!/usr/bin/env python3
"""Seeds of fuzz_optimizer_state (tests/fuzz/fuzz_optimizer_state.cpp), written into DIR:
structured inputs (the harness's byte format: a sound Adam state, and one per check it must
refuse: NaN, infinite and negative moments, a NaN learning rate, a beta of 1, lists that
disagree), and checkpoint.pt, a small torch.save file of ours whose "adam" dict holds tensors.
    optimizer_state_seeds.py DIR
"""
import struct
import sys
import zipfile
from pathlib import Path

# Codes of the harness's tables (kDoubles, kFloats).
D_ZERO, D_LR, D_BETA1, D_BETA2, D_EPS, D_ONE, D_NAN = 0, 1, 2, 3, 4, 5, 7
F_ZERO, F_ONE, F_MINUS_ONE, F_SMALL, F_NAN, F_INF, F_MINUS_ZERO, F_MINUS_TINY = 0, 1, 2, 3, 4, 5, 7, 9


def tensor(values, wide=False):
    return bytes([len(values), 1 if wide else 0, *values])


def state(options=(D_LR, D_BETA1, D_BETA2, D_EPS, D_ZERO, D_ZERO), size=2, flags=b"\x00",
          exp_avg=(F_SMALL, F_MINUS_ONE), exp_avg_sq=(F_ONE, F_SMALL), max_sq=(), wide=False):
    params = b""
    for step in range(size):
        params += bytes([step + 1]) + tensor(exp_avg, wide) + tensor(exp_avg_sq, wide)
        params += tensor(max_sq, wide)
    return bytes([1, *options, size]) + flags + params


STRUCTURED = {
    "sound": state(),
    "sound_negative_zero_second_moment": state(exp_avg_sq=(F_MINUS_ZERO, F_ONE)),
    "nan_exp_avg": state(exp_avg=(F_ONE, F_NAN)),
    "infinite_exp_avg_sq_float64": state(exp_avg_sq=(F_INF,), wide=True),
    "negative_exp_avg_sq": state(exp_avg_sq=(F_ONE, F_MINUS_ONE)),
    "negative_max_exp_avg_sq": state(max_sq=(F_MINUS_TINY,)),
    "nan_learning_rate": state(options=(D_NAN, D_BETA1, D_BETA2, D_EPS, D_ZERO, D_ZERO)),
    "beta2_of_one": state(options=(D_LR, D_BETA1, D_ONE, D_EPS, D_ZERO, D_ZERO)),
    "no_exp_avg_sq_key": state(flags=b"\x01\x04"),
    "one_more_step": state(flags=b"\x02\x00"),
    "a_string_among_the_moments": state(flags=b"\x04\x03"),
}


def text(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def integer(n):
    return b"J" + struct.pack("<i", n)


def real(x):
    return b"G" + struct.pack(">d", x)


def pickle_list(items):
    return b"](" + b"".join(items) + b"e"


def pickle_dict(pairs):
    return b"}(" + b"".join(text(k) + v for k, v in pairs) + b"u"


def pickle_tensor(key, n):
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + b"(" + text("storage") +
            b"ctorch\nFloatStorage\n" + text(key) + text("cpu") + integer(n) + b"tQ" +
            integer(0) + b"(" + integer(n) + b"t(" + integer(1) + b"t\x89" +
            b"ccollections\nOrderedDict\n)RtR")


def checkpoint(path):
    """A checkpoint of format 2 with one Adam group of two parameters (the second without a state
    yet: step -1, empty moments), as write_checkpoint lays it out."""
    storages = {}

    def stored(values):
        key = str(len(storages))
        storages[key] = struct.pack(f"<{len(values)}f", *values)
        return pickle_tensor(key, len(values))

    adam = pickle_dict([
        ("group_options", pickle_list([real(x) for x in (1e-3, 0.9, 0.999, 1e-8, 0.0, 0.0)])),
        ("group_sizes", pickle_list([integer(2)])),
        ("steps", pickle_list([integer(3), integer(-1)])),
        ("exp_avg", pickle_list([stored([0.1, -0.2, 0.3]), stored([])])),
        ("exp_avg_sq", pickle_list([stored([0.01, 0.04, 0.09]), stored([])])),
        ("max_exp_avg_sq", pickle_list([stored([]), stored([])])),
    ])
    root = pickle_dict([
        ("format", text("tts-train-checkpoint-2")), ("step", integer(3)), ("epoch", integer(0)),
        ("batch_in_epoch", integer(0)), ("world_size", integer(1)), ("batch_size", integer(4)),
        ("config", text("")), ("model", b"}"), ("parameter_names", b"]"), ("adam", adam),
        ("rng_state", stored([])),
    ])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", b"\x80\x02" + root + b".")
        for key, data in storages.items():
            z.writestr(f"archive/data/{key}", data)
        z.writestr("archive/version", b"3\n")


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in STRUCTURED.items():
        (out / name).write_bytes(data)
    checkpoint(out / "checkpoint.pt")


if __name__ == "__main__":
    main()
