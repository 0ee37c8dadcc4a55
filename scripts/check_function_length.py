#!/usr/bin/env python3
"""No function in src/ is over 80 lines unless a comment just above it starts with
"// Over 80 lines:" and names why (docs/architecture.md, "Rooms of a family"). Run by .ci/run;
prints each long function with its length.

    scripts/check_function_length.py [ROOT]

A function is a brace block at namespace or class level whose opening follows a parameter list
(lambdas and blocks inside a function count as that function's lines); comments, strings and raw
strings are blanked first.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
LIMIT = 80
REASON = "// Over 80 lines:"


def blanked(text):
    """The text with comments, string and character literals blanked, newlines kept."""
    out, i, n = [], 0, len(text)
    keep_newlines = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        else:
            raw = re.match(r'R"([^()\\ ]{0,16})\(', text[i : i + 20])
            if raw:
                end = ")" + raw.group(1) + '"'
                j = text.find(end, i)
                j = n if j < 0 else j + len(end)
            elif text[i] in "\"'":
                j = i + 1
                while j < n and text[j] != text[i] and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j += 1
            else:
                out.append(text[i])
                i += 1
                continue
        out.append(keep_newlines(text[i:j]))
        i = j
    return "".join(out)


def long_functions(path):
    """(first line, lines, signature) of each function of `path` over LIMIT lines."""
    text = path.read_text()
    lines = text.split("\n")
    code = blanked(text)
    found, stack, last = [], [], 0
    for i, c in enumerate(code):
        if c == "{":
            before = code[last:i]
            if any(kind == "function" for kind, _ in stack):
                kind = "inner"
            elif re.search(r"\bnamespace\b", before):
                kind = "namespace"
            elif re.search(r"\b(class|struct|union|enum)\b[^()]*$", before):
                kind = "class"
            elif ")" in before and not before.strip().endswith("="):
                kind = "function"
            else:
                kind = "other"
            stack.append((kind, i))
            last = i + 1
        elif c == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "function":
                    first, end = code.count("\n", 0, start), code.count("\n", 0, i)
                    if end - first + 1 > LIMIT:
                        found.append((first, end - first + 1))
            last = i + 1
        elif c == ";":
            last = i + 1
    result = []
    for first, count in found:
        # The signature's first line: back over the lines of the declaration to a blank line,
        # a comment or the end of the previous statement.
        top = first
        while top > 0 and lines[top - 1].strip() and not lines[top - 1].strip().startswith(
                ("//", "#")) and not lines[top - 1].rstrip().endswith((";", "}", "{")):
            top -= 1
        if top > 0 and lines[top - 1].strip().startswith("//"):
            comment = top - 1
            while comment > 0 and lines[comment - 1].strip().startswith("//"):
                comment -= 1
            if any(line.strip().startswith(REASON) for line in lines[comment:top]):
                continue
        result.append((top + 1, count, lines[top].strip()))
    return result


def main():
    found = 0
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix not in (".cpp", ".h", ".cu"):
            continue
        for line, count, signature in long_functions(path):
            print(f"{path.relative_to(ROOT).as_posix()}:{line}: {count} lines: {signature}")
            found += 1
    if found:
        print(f"check_function_length: {found} function(s) over {LIMIT} lines: split them into "
              f"named steps, or say why above them in a comment starting '{REASON}'",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
