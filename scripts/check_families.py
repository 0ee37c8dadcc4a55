#!/usr/bin/env python3
"""Model families live in their folders: no family's name in code (comments aside) outside
src/models/, include/tts/models/ and the registry; inside a family, its network (the rooms
layers/ and kernels/) includes no other room of it and no other family's headers
(docs/architecture.md, "Rooms of a family"). Run by .ci/run; prints each offending line.

    scripts/check_families.py [ROOT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
FAMILY = re.compile(r"tacotron|hifigan|hifi-gan|wavenet", re.IGNORECASE)
ALLOWED = ("src/models/", "include/tts/models/")
# Names of other projects, not of our families: NVIDIA's repository and its loss class.
PEERS = re.compile(r"NVIDIA/tacotron2|Tacotron2Loss")


def code_only(text):
    """The text with // and /* */ comments blanked (strings kept), line numbers preserved."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


INCLUDE = re.compile(r'#include "tts/models/(\w+)/(?:(\w+)/)?')
NETWORK_ROOMS = ("layers", "kernels")


def room_breaches():
    """Lines of a family's network rooms that include another room of it or another family."""
    breaches = []
    for folder in ("src/models", "include/tts/models"):
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT / folder).parts
            if path.suffix not in (".cpp", ".h", ".cu") or len(parts) < 3:
                continue
            family, room = parts[0], parts[1]
            if room not in NETWORK_ROOMS:
                continue
            for number, line in enumerate(path.read_text().split("\n"), 1):
                m = INCLUDE.match(line.strip())
                if not m or m.group(1) not in ("tacotron2", "hifigan", "wavenet"):
                    continue
                if m.group(1) != family or (m.group(2) and m.group(2) not in NETWORK_ROOMS):
                    breaches.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {line.strip()}")
    return breaches


def main():
    breaches = room_breaches()
    for line in breaches:
        print(line)
    if breaches:
        print(f"check_families: {len(breaches)} include(s) from a family's network (layers/, "
              "kernels/) reach another of its rooms or another family: the network builds on "
              "nothing of training, speaking or conversion", file=sys.stderr)
        return 1
    found = 0
    for folder in ("src", "include", "apps"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h", ".cu"):
                continue
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(ALLOWED):
                continue
            for number, line in enumerate(code_only(path.read_text()).split("\n"), 1):
                if FAMILY.search(PEERS.sub("", line)):
                    print(f"{relative}:{number}: {line.strip()}")
                    found += 1
    if found:
        print(f"check_families: {found} line(s) name a model family outside src/models/ and "
              "include/tts/models/ (the registry): move the code into the family's folder or "
              "ask the registry", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
