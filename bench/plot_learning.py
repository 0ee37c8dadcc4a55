#!/usr/bin/env python3
"""Draws a run's learning curves from its metrics.jsonl: the training loss (each logged interval's
mean) and the validation loss against the step, and prints the validation records as a Markdown
table.

  python3 plot_learning.py RUN/metrics.jsonl --out OUT.png [--key KEY] [--title TEXT]
      [--ylabel TEXT]

--key: the metric drawn for both (default loss; mel_l1 for a HiFi-GAN run, whose training loss is
the generator's whole GAN objective and its validation the mel L1 alone).

Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import json
import sys


def read(path, key):
    train, val = [], []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{line_no}: not a JSON record ({e})")
            if not isinstance(record, dict) or record.get(key) is None or "step" not in record:
                continue
            (val if record.get("kind") == "val" else train).append(
                (int(record["step"]), float(record[key]), record.get("elapsed_s")))
    if not val:
        sys.exit(f"{path}: no validation records (kind \"val\") with {key}: nothing to plot")
    return train, val


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("--out", required=True)
    ap.add_argument("--key", default="loss")
    ap.add_argument("--title", default="")
    ap.add_argument("--ylabel", default="loss")
    a = ap.parse_args()
    train, val = read(a.metrics, a.key)

    print(f"| step | validation {a.key} |")
    print("|---:|---:|")
    for step, loss, _ in val:
        print(f"| {step} | {loss:.4f} |")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    if train:
        ax.plot([s for s, _, _ in train], [v for _, v, _ in train], color="0.6", lw=1,
                label="training (mean of each logged interval)")
    ax.plot([s for s, _, _ in val], [v for _, v, _ in val], "o-", color="C3", lw=2, ms=4,
            label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel(a.ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    if a.title:
        ax.set_title(a.title)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"\nplot: {a.out}")


if __name__ == "__main__":
    main()
