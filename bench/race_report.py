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
    "nvidia-noshuffle": "NVIDIA's loop without TextMelLoader's list shuffle",
    "ours-nvidia": "ours, NVIDIA's recipe, NVIDIA's init",
    "ours-nvidia-seed7": "ours, NVIDIA's recipe, seed 7",
    "ours-defaults": "ours, our defaults + guided attention 50",
    "ours-r-schedule": "ours, our defaults + guided 50, r 2 then 1",
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
                    # tts-train writes a non-finite value as null
                    loss = math.nan if r.get("loss") is None else float(r["loss"])
                    diagonal = float(r["diagonal_score"])
                    if math.isfinite(diagonal):
                        val.append((int(r["step"]), diagonal, loss))
    except OSError as e:
        sys.exit(f"race_report: cannot read {path}: {e}")
    curve = []  # (step, minutes, diagonal, validation loss)
    for step, diagonal, loss in val:
        before = [s for s in train if s <= step]  # the last training record at or before it
        minutes = train[max(before)] / 60 if before else math.nan
        curve.append((step, minutes, diagonal, loss))
    last_step = max(train) if train else 0
    s_per_step = train[last_step] / last_step if last_step else math.nan
    return curve, s_per_step, last_step


def first_pass(curve, threshold, last_step):
    for step, minutes, diagonal, _ in curve:
        if diagonal > threshold:
            return f"{step} ({minutes:.1f} min)"
    return f"> {last_step}"


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

    # The curves' level, for runs that never pass a threshold: means over the last three quarters.
    tail_from = a.steps // 4
    print(f"| run | > 0.5 at step (min) | > 0.7 at step (min) | best | last | mean, steps "
          f"{tail_from}-{a.steps}: diagonal / validation loss | s/step (with validation) |")
    print("|---|---|---|---|---|---|---|")
    for name, curve, s_per_step, last_step in runs:
        best = max((d for _, _, d, _ in curve), default=math.nan)
        last = curve[-1][2] if curve else math.nan
        stopped = f" (stopped at step {last_step})" if last_step < a.steps else ""
        tail = [(d, loss) for s, _, d, loss in curve if s >= tail_from]
        mean_d = sum(d for d, _ in tail) / len(tail) if tail else math.nan
        mean_l = sum(loss for _, loss in tail) / len(tail) if tail else math.nan
        print(f"| {LABELS.get(name, name)}{stopped} | {first_pass(curve, 0.5, last_step)} | "
              f"{first_pass(curve, 0.7, last_step)} | {best:.3f} | {last:.3f} | "
              f"{mean_d:.3f} / {mean_l:.2f} | {s_per_step:.3f} |")
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
        colours = {"nvidia": "tab:blue", "nvidia-seed7": "tab:cyan",
                   "nvidia-noshuffle": "tab:purple", "ours-nvidia": "tab:red",
                   "ours-nvidia-seed7": "tab:orange", "ours-defaults": "tab:green",
                   "ours-r-schedule": "tab:olive"}
        fig, axes = plt.subplots(2, 2, figsize=(13, 9))
        (all_steps, all_time), (recipe_steps, recipe_loss) = axes
        for name, curve, _, _ in runs:
            if not curve:
                continue
            steps_, minutes, diagonal, loss = zip(*curve)
            style = dict(label=LABELS.get(name, name), linewidth=1.2, color=colours.get(name),
                         linestyle="--" if name.startswith("nvidia") else "-")
            all_steps.plot(steps_, diagonal, **style)
            all_time.plot(minutes, diagonal, **style)
            # Below, the rows under NVIDIA's recipe only: their losses share one normalization
            # (NVIDIA's padded-batch means), and their scores need a scale of their own.
            if "nvidia" in name:
                recipe_steps.plot(steps_, diagonal, **style)
                recipe_loss.plot(steps_, loss, **style)
        for ax in (all_steps, all_time):
            ax.axhline(0.5, color="grey", linewidth=0.6, linestyle=":")
            ax.axhline(0.7, color="grey", linewidth=0.6, linestyle=":")
            ax.set_ylim(0, 1)
        all_steps.set_title("every run: diagonal score against steps", fontsize=10)
        all_time.set_title("every run: diagonal score against wall time", fontsize=10)
        recipe_steps.set_title("NVIDIA's recipe: diagonal score (zoomed)", fontsize=10)
        recipe_loss.set_title("NVIDIA's recipe: validation loss", fontsize=10)
        for ax in (all_steps, recipe_steps, recipe_loss):
            ax.set_xlabel("training step")
        all_time.set_xlabel("wall time (minutes, one CPU thread per run)")
        for ax in (all_steps, all_time, recipe_steps):
            ax.set_ylabel("validation diagonal score")
        recipe_loss.set_ylabel("validation loss (Tacotron2Loss)")
        recipe_loss.set_yscale("log")
        for ax in axes.flat:
            ax.grid(alpha=0.3)
        handles, labels = all_steps.get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=9)
        fig.tight_layout(rect=(0, 0.07, 1, 0.97))
        fig.suptitle(a.title)
        fig.savefig(a.plot, dpi=100)
        print(f"\nplot: {a.plot}")


if __name__ == "__main__":
    main()
