"""Helpers of scripts/new_voice.sh (Python's standard library only).

  new_voice_table.py best RUN FALLBACK   the checkpoint of RUN's lowest validation loss (each new
                                         best is saved under train.early_stopping); FALLBACK when
                                         the run's start (step 0) was best or nothing validated
  new_voice_table.py table OUT "1 5 15"  the markdown table of OUT's evaluations and times.tsv
"""
import json
import math
import os
import sys


def best_checkpoint(run, fallback):
    best_step, best_loss = None, math.inf
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as metrics:
        for line in metrics:
            record = json.loads(line)
            loss = record.get("loss")
            if record.get("kind") == "val" and loss is not None and loss < best_loss:
                best_step, best_loss = int(record["step"]), loss
    if not best_step:
        return fallback
    path = os.path.join(run, "checkpoints", f"step_{best_step:08d}.pt")
    return path if os.path.isfile(path) else fallback


def read_times(out):
    times = {}
    with open(os.path.join(out, "times.tsv"), encoding="utf-8") as table:
        next(table)
        for line in table:
            name, steps, seconds = line.rstrip("\n").split("\t")
            times[name] = (steps, int(seconds))
    return times


def summary(out, name):
    path = os.path.join(out, "eval", name, "evaluate.json")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as report:
        return json.load(report)["summary"]


def figure(value, digits):
    return "n/a" if value is None else f"{value:.{digits}f}"


def table(out, minutes):
    times = read_times(out)
    rows = []

    def row(label, vocoder, evaluation, runs):
        s = summary(out, evaluation)
        if s is None:
            return
        steps = " + ".join(times[r][0] for r in runs if r in times) or "-"
        seconds = sum(times[r][1] for r in runs if r in times)
        wall = f"{seconds / 60:.1f}" if seconds else "-"
        rows.append(
            f"| {label} | {vocoder} | {figure(s.get('mcd_db'), 2)} | "
            f"{figure(s.get('f0_rmse_hz'), 1)} | {figure(s.get('vde'), 3)} | "
            f"{figure(s.get('cer'), 3)} | {steps} | {wall} |"
        )

    base_runs = ["base"]
    row("the new voice's own recordings (the recognizer's floor)", "-", "new_voice", [])
    row("the base voice's own recordings", "-", "base_voice", [])
    row("the new voice's own mels (copy synthesis)", "HiFi-GAN, base", "copy_base_voc", ["base_voc"])
    row("base model unchanged", "Griffin-Lim", "base_gl", base_runs)
    row("base model unchanged", "HiFi-GAN, base", "base_hifigan", base_runs + ["base_voc"])
    for m in minutes:
        tuned = [f"tuned_{m}min"]
        row(f"{m} min: fine-tuned", "Griffin-Lim", f"tuned_{m}min_gl", tuned)
        row(f"{m} min: fine-tuned", "HiFi-GAN, base", f"tuned_{m}min_hifigan", tuned)
        row(f"{m} min: fine-tuned", "HiFi-GAN, fine-tuned on GTA", f"tuned_{m}min_tuned_hifigan",
            tuned + [f"voc_{m}min"])
        row(f"{m} min: from scratch", "Griffin-Lim", f"scratch_{m}min_gl", [f"scratch_{m}min"])
        row(f"{m} min: NVIDIA's warm start", "Griffin-Lim", f"nvidia_{m}min_gl", [f"nvidia_{m}min"])
    header = (
        "| model | vocoder | MCD (dB) | F0 RMSE (Hz) | VDE | CER | steps | wall (min) |\n"
        "|---|---|---:|---:|---:|---:|---|---:|"
    )
    return header + "\n" + "\n".join(rows) + "\n"


def main(argv):
    if len(argv) == 4 and argv[1] == "best":
        print(best_checkpoint(argv[2], argv[3]))
    elif len(argv) == 4 and argv[1] == "table":
        sys.stdout.write(table(argv[2], argv[3].split()))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
