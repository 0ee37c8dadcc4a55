"""Trains NVIDIA/tacotron2's model on a tts-train feature store, the way its train.py does, on the
CPU, and records what `tts-train train` records for the race to alignment (bench/race_to_alignment.sh).

Usage: python3 nvidia_race.py PEER_DIR --feats FEATS --config RESOLVED.yaml --out DIR --steps N
           [--val-interval V] [--log-interval L] [--threads T] [--no-list-shuffle]

PEER_DIR: a checkout of NVIDIA/tacotron2 outside this repository. RESOLVED.yaml: the output of
`tts-train config --config ... --set ...`, so that both sides read one config: the model's
dimensions and dropout, audio.n_mels, and train.batch_size, learning_rate, weight_decay,
grad_clip_thresh, seed, which NVIDIA's hparams.py holds too. NVIDIA's fixed choices stay its own:
Adam's default eps (1e-8), Tacotron2Loss, fp32, no guided attention, r 1.

What runs is train.py's loop: torch.manual_seed(seed), the model, Adam(lr, weight_decay), each
file list shuffled by Python's random seeded with seed (TextMelLoader), a DataLoader with
shuffle=True and drop_last=True over the training split with TextMelCollate, and for each batch
zero_grad, parse_batch, forward, Tacotron2Loss, backward, clip_grad_norm_(grad_clip_thresh),
step. Every V steps, train.py's validate(): eval mode, no_grad, the validation split in batches
of batch_size through TextMelCollate, teacher forcing (prenet dropout stays on, as in NVIDIA's
model). The differences, none of which changes the distribution of the updates: the utterances
come from FEATS (the mels tts-train trains on, and its cleaned text, read with
text_to_sequence(text, []), i.e. no second cleaning) and are loaded once before the clock starts
instead of by a DataLoader worker (the random draws are the same); the validations come after
steps V, 2V, ... (train.py's after steps 1, N+1, ...; they draw prenet dropout from the
generator training uses); there is no tensorboard logger (train.py logs every step: this row is
the faster for it) and no checkpoint but DIR/init.pt, the initial weights in NVIDIA's checkpoint
format (for `tts-train train --init-from`, so that a row of ours can start from the same
weights).

Writes DIR/metrics.jsonl with the keys of tts-train's metrics.jsonl that the race reads:
{"kind": "train", "step", "loss", "grad_norm", "elapsed_s"} every L steps and
{"kind": "val", "step", "loss", "diagonal_score", "focus_rate", "elapsed_s"} every V steps, the
scores computed as tts-train's alignment_scores() computes them (see
include/tts/models/tacotron2/training/alignment_metrics.h): per utterance, within its real decoder steps and tokens,
the mean over tokens of the largest weight any step gives the token (diagonal) and the mean over
steps of the largest weight the step gives any token (focus), averaged over utterances.
elapsed_s counts from the start of the first step.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nvidia_peer  # noqa: E402

# NVIDIA's model.py fixes these rates; the config must agree for the rows to train alike.
NVIDIA_FIXED = {"p_encoder_dropout": 0.5, "p_prenet_dropout": 0.5, "p_postnet_dropout": 0.5}
HPARAM_KEYS = ("symbols_embedding_dim", "encoder_kernel_size", "encoder_n_convolutions",
               "encoder_embedding_dim", "n_frames_per_step", "decoder_rnn_dim", "prenet_dim",
               "max_decoder_steps", "gate_threshold", "p_attention_dropout", "p_decoder_dropout",
               "attention_rnn_dim", "attention_dim", "attention_location_n_filters",
               "attention_location_kernel_size", "postnet_embedding_dim", "postnet_kernel_size",
               "postnet_n_convolutions")


def fail(message):
    print(f"nvidia_race: {message}", file=sys.stderr)
    sys.exit(2)


def read_split(feats, name, text_to_sequence, n_mels):
    path = os.path.join(feats, name)
    if not os.path.isfile(path):
        fail(f"no {path}: FEATS must be a feature store written by `tts-train preprocess`")
    items = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:6] != ["id", "n_frames", "n_samples", "mel", "linear", "text"]:
            fail(f"{path} line 1: expected the header 'id n_frames n_samples mel linear text', "
                 f"found {header}")
        for line_no, line in enumerate(f, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 6:
                fail(f"{path} line {line_no}: expected 6 tab-separated fields, found {len(fields)}")
            mel = np.load(os.path.join(feats, fields[3]), allow_pickle=False)
            if mel.ndim != 2 or mel.shape[1] != n_mels or mel.dtype != np.float32:
                fail(f"{path} line {line_no}: {fields[3]} is {mel.dtype} {mel.shape}, expected "
                     f"float32 [frames, {n_mels}]")
            ids = text_to_sequence(fields[5], [])
            items.append((ids, mel.T.copy()))
    return items


def alignment_scores(alignments, decoder_steps, text_lengths):
    diagonal, focus, n = 0.0, 0.0, 0
    for b in range(alignments.size(0)):
        steps = min(int(decoder_steps[b]), alignments.size(1))
        tokens = min(int(text_lengths[b]), alignments.size(2))
        if steps <= 0 or tokens <= 0:
            continue
        a = alignments[b, :steps, :tokens].float()
        diagonal += a.max(0)[0].mean().item()
        focus += a.max(1)[0].mean().item()
        n += 1
    return (diagonal / n, focus / n, n) if n else (math.nan, math.nan, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("peer")
    ap.add_argument("--feats", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--val-interval", type=int, default=50)
    ap.add_argument("--log-interval", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-list-shuffle", action="store_true",
                    help="leave out TextMelLoader's shuffle of the file lists (another draw of "
                         "the same distribution of batches)")
    a = ap.parse_args()

    peer = nvidia_peer.load(a.peer)
    import torch
    from torch.utils.data import DataLoader

    with open(a.config, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    model_cfg, train_cfg = config["model"], config["train"]
    for key, value in NVIDIA_FIXED.items():
        if float(model_cfg[key]) != value:
            fail(f"{a.config}: model.{key} is {model_cfg[key]} but NVIDIA's model.py fixes it at "
                 f"{value}; set model.{key}={value}")
    if int(model_cfg["n_frames_per_step"]) != 1:
        fail(f"{a.config}: model.n_frames_per_step is {model_cfg['n_frames_per_step']}, but "
             "NVIDIA's code trains r 1 only; set model.n_frames_per_step=1")
    n_mels = int(config["audio"]["n_mels"])
    hp = nvidia_peer.hparams(len(peer.text.symbols), n_mel_channels=n_mels,
                             **{k: model_cfg[k] for k in HPARAM_KEYS})
    batch_size = int(train_cfg["batch_size"])
    learning_rate = float(train_cfg["learning_rate"])

    torch.set_num_threads(a.threads)
    torch.manual_seed(int(train_cfg["seed"]))
    model = peer.model.Tacotron2(hp)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate,
                                 weight_decay=float(train_cfg["weight_decay"]))
    criterion = peer.loss_function.Tacotron2Loss()
    os.makedirs(a.out, exist_ok=True)
    torch.save({"iteration": 0, "state_dict": model.state_dict(),
                "learning_rate": learning_rate},
               os.path.join(a.out, "init.pt"))

    to_ids = peer.text.text_to_sequence
    train_items = read_split(a.feats, "train.tsv", to_ids, n_mels)
    val_items = read_split(a.feats, "val.tsv", to_ids, n_mels)
    # As TextMelLoader does for each file list: Python's random, seeded, shuffles the list that
    # the DataLoader's permutations then index.
    for items in (train_items, val_items) if not a.no_list_shuffle else ():
        random.seed(int(train_cfg["seed"]))
        random.shuffle(items)
    if not val_items:
        fail(f"{a.feats}: no validation utterances (val.tsv is empty); preprocess with data.val_size > 0")
    if len(train_items) < batch_size:
        fail(f"{a.feats}: {len(train_items)} training utterances, fewer than one batch of {batch_size}")
    as_tensors = [(torch.IntTensor(ids), torch.from_numpy(mel)) for ids, mel in train_items]
    val_tensors = [(torch.IntTensor(ids), torch.from_numpy(mel)) for ids, mel in val_items]
    collate = peer.data_utils.TextMelCollate(hp.n_frames_per_step)
    train_loader = DataLoader(as_tensors, num_workers=0, shuffle=True, batch_size=batch_size,
                              pin_memory=False, drop_last=True, collate_fn=collate)
    clip = float(train_cfg["grad_clip_thresh"])

    metrics = open(os.path.join(a.out, "metrics.jsonl"), "w", encoding="utf-8")

    def record(**fields):
        metrics.write(json.dumps(fields) + "\n")
        metrics.flush()

    def validate(step, start):
        model.eval()
        with torch.no_grad():
            loader = DataLoader(val_tensors, num_workers=0, shuffle=False, batch_size=batch_size,
                                pin_memory=False, collate_fn=collate)
            loss_sum, batches, diag_sum, focus_sum, utterances = 0.0, 0, 0.0, 0.0, 0
            for batch in loader:
                x, y = model.parse_batch(batch)
                y_pred = model(x)
                loss_sum += criterion(y_pred, y).item()
                batches += 1
                diagonal, focus, n = alignment_scores(y_pred[3], x[4], x[1])
                diag_sum += diagonal * n
                focus_sum += focus * n
                utterances += n
        model.train()
        record(kind="val", step=step, loss=loss_sum / batches,
               diagonal_score=diag_sum / utterances, focus_rate=focus_sum / utterances,
               elapsed_s=time.perf_counter() - start)
        print(f"nvidia step {step}: validation loss {loss_sum / batches:.4f}, diagonal "
              f"{diag_sum / utterances:.3f}", flush=True)

    model.train()
    step = 0
    start = time.perf_counter()
    while step < a.steps:
        for batch in train_loader:
            for group in optimizer.param_groups:
                group["lr"] = learning_rate  # train.py sets it every step
            model.zero_grad()
            x, y = model.parse_batch(batch)
            y_pred = model(x)
            loss = criterion(y_pred, y)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            step += 1
            if not math.isfinite(loss.item()):
                fail(f"step {step}: the loss is {loss.item()}")
            if step % a.log_interval == 0:
                record(kind="train", step=step, loss=loss.item(), grad_norm=float(grad_norm),
                       elapsed_s=time.perf_counter() - start)
            if step % a.val_interval == 0:
                validate(step, start)
            if step >= a.steps:
                break
    metrics.close()


if __name__ == "__main__":
    main()
