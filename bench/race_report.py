"""Reads the runs of the race to alignment (bench/race_to_alignment.sh) and prints a Markdown table
row per run; draws the validation diagonal score against steps and against wall time.

Usage: python3 race_report.py --steps N [--plot OUT.png] NAME=METRICS.jsonl ...

Each METRICS.jsonl is tts-train's metrics.jsonl or bench/nvidia_race.py's (the same keys). A
validation's wall time is the elapsed_s of the last training record at or before its step, so both
sides are timed alike (training steps and the validations between them).
"""
import argparse
import json
import math
import sys

LABELS = {
    "nvidia": "NVIDIA's train.py loop",
    "nvidia-seed7": "NVIDIA's train.py loop, seed 7",
    "ours-nvidia": "ours, NVIDIA's recipe, NVIDIA's init",
    "ours-nvidia-seed7": "ours, NVIDIA's recipe, seed 7",
    "ours-defaults": "ours, our defaults (guided attention)",
    "ours-r-schedule": "ours, our defaults, r 2 then 1",
}


def read_run(path):
    train, val = {}, []
    try:
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, start=1):
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"race_report: {path} line {line_no}: not JSON ({e})")
                if r.get("kind") == "train" and "elapsed_s" in r:
                    train[int(r["step"])] = float(r["elapsed_s"])
                elif r.get("kind") == "val" and r.get("diagonal_score") is not None:
                    val.append((int(r["step"]), float(r["diagonal_score"]), float(r["loss"])))
    except OSError as e:
        sys.exit(f"race_report: cannot read {path}: {e}")
    curve = []  # (step, minutes, diagonal, validation loss)
    for step, diagonal, loss in val:
        before = [s for s in train if s <= step]
        minutes = train[max(before)] / 60 if before else math.nan
        curve.append((step, minutes, diagonal, loss))
    last_step = max(train) if train else 0
    s_per_step = train[last_step] / last_step if last_step else math.nan
    return curve, s_per_step, last_step


def first_pass(curve, threshold, steps):
    for step, minutes, diagonal, _ in curve:
        if diagonal > threshold:
            return f"{step} ({minutes:.1f} min)"
    return f"> {steps}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--plot")
    ap.add_argument("--title", default="Race to alignment (bench/race_to_alignment.sh)")
    ap.add_argument("runs", nargs="+", metavar="NAME=METRICS.jsonl")
    a = ap.parse_args()
    runs = []
    for spec in a.runs:
        name, sep, path = spec.partition("=")
        if not sep:
            sys.exit(f"race_report: expected NAME=METRICS.jsonl, found '{spec}'")
        runs.append((name, *read_run(path)))

    print("| run | > 0.5 at step (min) | > 0.7 at step (min) | best | last | s/step |")
    print("|---|---|---|---|---|---|")
    for name, curve, s_per_step, last_step in runs:
        best = max((d for _, _, d, _ in curve), default=math.nan)
        last = curve[-1][2] if curve else math.nan
        print(f"| {LABELS.get(name, name)} | {first_pass(curve, 0.5, a.steps)} | "
              f"{first_pass(curve, 0.7, a.steps)} | {best:.3f} | {last:.3f} | {s_per_step:.3f} |")
    print()
    print("every validation, step: diagonal score of each run | validation loss of each run ("
          + ", ".join(name for name, *_ in runs) + ")")
    steps = sorted({s for _, curve, _, _ in runs for s, *_ in curve})
    by_run = [{s: (d, loss) for s, _, d, loss in curve} for _, curve, _, _ in runs]
    for s in steps:
        print(f"{s}: " + " ".join(f"{r[s][0]:.3f}" if s in r else "-" for r in by_run) + " | "
              + " ".join(f"{r[s][1]:.3f}" if s in r else "-" for r in by_run))

    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
        for name, curve, _, _ in runs:
            if not curve:
                continue
            steps_, minutes, diagonal, loss = zip(*curve)
            style = dict(label=LABELS.get(name, name), linewidth=1.3,
                         linestyle="--" if name.startswith("nvidia") else "-")
            axes[0].plot(steps_, diagonal, **style)
            axes[1].plot(minutes, diagonal, **style)
            # Losses compare only under one normalization: NVIDIA's padded-batch means.
            if "nvidia" in name:
                axes[2].plot(steps_, loss, **style)
        for ax, xlabel in zip(axes, ("training step", "wall time (minutes, one CPU thread)",
                                     "training step")):
            ax.set_xlabel(xlabel)
            ax.grid(alpha=0.3)
        for ax in axes[:2]:
            ax.axhline(0.5, color="grey", linewidth=0.6, linestyle=":")
            ax.axhline(0.7, color="grey", linewidth=0.6, linestyle=":")
            ax.set_ylabel("validation diagonal score")
            ax.set_ylim(0, 1)
        axes[0].legend(loc="upper left", fontsize=8)
        axes[2].set_ylabel("validation loss (NVIDIA's Tacotron2Loss)")
        axes[2].set_yscale("log")
        axes[2].legend(loc="upper right", fontsize=8)
        fig.suptitle(a.title)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)
        print(f"\nplot: {a.plot}")


if __name__ == "__main__":
    main()
