#!/usr/bin/env python3
"""Compares the kernels of two PTX files, one kernel at a time.

    tools/ptx_compare.py OLD.ptx NEW.ptx [--only REGEX]

Each .entry is cut out with its body; source-position lines (.loc, .file), comments and the
function index in block labels are dropped, so moving code between headers or reordering the
kernels of a file does not count as a change. Prints the kernels that
differ, are missing or are new, and exits 1 if any kernel present in both differs (or, with
--same-set, if the sets differ).
"""
import re
import sys


def kernels(path, only):
    text = open(path).read()
    out = {}
    for m in re.finditer(r"^(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z0-9_$]+)\(", text, re.M):
        name = re.sub(r"_Z(Z?)N\d+_INTERNAL_[0-9a-f]{8}_\d+_\w+?_[0-9a-f]{8}(?=\d)", r"_Z\1N_INTERNAL_", m.group(1))
        if only and not re.search(only, name):
            continue
        start = m.start()
        brace = text.index("{", m.end())
        depth, i = 0, brace
        while True:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        body = text[start:i + 1]
        lines = []
        for line in body.split("\n"):
            line = re.sub(r"//.*", "", line).rstrip()
            line = re.sub(r"\$L__BB\d+_", "$L__BB_", line)  # labels carry the function's index in the file
            # static device functions are named after their translation unit
            line = re.sub(r"_Z(Z?)N\d+_INTERNAL_[0-9a-f]{8}_\d+_\w+?_[0-9a-f]{8}(?=\d)", r"_Z\1N_INTERNAL_", line)
            if not line or re.match(r"\s*\.(loc|file)\b", line):
                continue
            lines.append(line)
        out[name] = "\n".join(lines)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
        args.remove(only)
    if len(args) != 2:
        print(__doc__)
        return 2
    old, new = kernels(args[0], only), kernels(args[1], only)
    same = [k for k in old if k in new and old[k] == new[k]]
    diff = [k for k in old if k in new and old[k] != new[k]]
    gone = [k for k in old if k not in new]
    added = [k for k in new if k not in old]
    for k in diff:
        print("DIFFERS  " + k)
    for k in gone:
        print("MISSING  " + k)
    for k in added:
        print("NEW      " + k)
    print("%d identical, %d differ, %d missing, %d new" % (len(same), len(diff), len(gone), len(added)))
    bad = diff or ("--same-set" in sys.argv and (gone or added))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
