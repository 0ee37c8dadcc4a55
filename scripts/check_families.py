#!/usr/bin/env python3
"""Model families live in their folders: no family's name in code (comments aside) outside
src/models/, include/tts/models/ and the registry. Run by .ci/run; prints each offending line.

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


def main():
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
