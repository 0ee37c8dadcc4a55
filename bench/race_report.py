"""Reads the runs of a race to alignment (bench/race_to_alignment.sh, bench/race_frontends.sh) and
prints a Markdown table row per run; draws the validation diagonal score against steps and against
wall time. Runs named SIDE-seedN are also summarized per side, over their seeds.

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

    groups = seed_groups(runs)
    if any(len(members) > 1 for members in groups.values()):
        print("\nover the seeds of each side: steps to > 0.5 and > 0.7 (each seed), mean diagonal score"
              f" and validation loss over steps {tail_from}-{a.steps}")
        for group, members in groups.items():
            firsts = {t: [first_step(curve, t) for _, curve, *_ in members] for t in (0.5, 0.7)}
            tails = [[(d, loss) for s, _, d, loss in curve if s >= tail_from]
                     for _, curve, *_ in members]
            flat = [x for tail in tails for x in tail]
            mean_d = sum(d for d, _ in flat) / len(flat) if flat else math.nan
            mean_l = sum(loss for _, loss in flat) / len(flat) if flat else math.nan
            shown = {t: ", ".join("-" if x is None else str(x) for x in v) for t, v in firsts.items()}
            print(f"{group}: > 0.5 at steps {shown[0.5]}; > 0.7 at steps {shown[0.7]}; "
                  f"{mean_d:.3f} / {mean_l:.2f}")

    if a.plot:
        draw(a, runs, groups)


def seed_groups(runs):
    """Runs named SIDE-seedN, grouped by SIDE (a run without a seed suffix is its own group)."""
    groups = {}
    for run in runs:
        side, sep, seed = run[0].rpartition("-seed")
        groups.setdefault(side if sep and seed.isdigit() else run[0], []).append(run)
    return groups


def first_step(curve, threshold):
    return next((step for step, _, diagonal, _ in curve if diagonal > threshold), None)


def draw(a, runs, groups):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colours = {"nvidia": "tab:blue", "nvidia-seed7": "tab:cyan",
               "nvidia-noshuffle": "tab:purple", "ours-nvidia": "tab:red",
               "ours-nvidia-seed7": "tab:orange", "ours-defaults": "tab:green",
               "ours-r-schedule": "tab:olive"}
    palette = ["tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:gray"]
    group_colour = {g: palette[i % len(palette)] for i, g in enumerate(groups)}
    recipe = any("nvidia" in name for name, *_ in runs)
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    (all_steps, all_time), (low_left, low_right) = axes
    for name, curve, _, _ in runs:
        if not curve:
            continue
        group = next(g for g, members in groups.items() if any(m[0] == name for m in members))
        steps_, minutes, diagonal, loss = zip(*curve)
        seed_index = [m[0] for m in groups[group]].index(name)
        style = dict(label=LABELS.get(name, name), linewidth=1.2,
                     color=colours.get(name, group_colour[group]),
                     linestyle="--" if name.startswith("nvidia")
                     else ("-", "-.", ":", (0, (5, 1)))[seed_index % 4])
        all_steps.plot(steps_, diagonal, **style)
        all_time.plot(minutes, diagonal, **style)
        if not recipe:  # every run's loss: one normalization (our defaults) throughout
            low_left.plot(steps_, loss, **style)
        elif "nvidia" in name:
            # The rows under NVIDIA's recipe only: their losses share one normalization
            # (NVIDIA's padded-batch means), and their scores need a scale of their own.
            low_left.plot(steps_, diagonal, **style)
            low_right.plot(steps_, loss, **style)
    if not recipe:  # each side's mean score over its seeds, at the steps every seed validated
        for group, members in groups.items():
            by_step = [{s: d for s, _, d, _ in curve} for _, curve, *_ in members]
            common = sorted(set.intersection(*(set(b) for b in by_step)))
            if common:
                low_right.plot(common, [sum(b[s] for b in by_step) / len(by_step) for s in common],
                               color=group_colour[group], linewidth=1.6,
                               label=f"{group} (mean of {len(members)})")
        low_right.legend(fontsize=9)
    for ax in (all_steps, all_time) + (() if recipe else (low_right,)):
        ax.axhline(0.5, color="grey", linewidth=0.6, linestyle=":")
        ax.axhline(0.7, color="grey", linewidth=0.6, linestyle=":")
        ax.set_ylim(0, 1)
    all_steps.set_title("every run: diagonal score against steps", fontsize=10)
    all_time.set_title("every run: diagonal score against wall time", fontsize=10)
    if recipe:
        low_left.set_title("NVIDIA's recipe: diagonal score (zoomed)", fontsize=10)
        low_right.set_title("NVIDIA's recipe: validation loss", fontsize=10)
        low_left.set_ylabel("validation diagonal score")
        low_right.set_ylabel("validation loss (Tacotron2Loss)")
        low_right.set_yscale("log")
    else:
        low_left.set_title("every run: validation loss", fontsize=10)
        low_right.set_title("each side: mean diagonal score over its seeds", fontsize=10)
        low_left.set_ylabel("validation loss (real-frame means)")
        low_left.set_yscale("log")
        low_right.set_ylabel("validation diagonal score")
    for ax in (all_steps, low_left, low_right):
        ax.set_xlabel("training step")
    all_time.set_xlabel("wall time (minutes, one CPU thread per run)")
    for ax in (all_steps, all_time):
        ax.set_ylabel("validation diagonal score")
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
