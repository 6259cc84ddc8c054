#!/usr/bin/env python3
"""Writes one JSON object from KEY=VALUE arguments, for build-sqlcipher.sh (structured files are written by a
tool made for them, never by printf).

    json_object.py OUT.json 'name=SQLCipher' 'flags[]=-O2' 'flags[]=-fPIC' 'archives>lib/x.a=abc123'

KEY=VALUE sets a string; KEY[]=VALUE appends a string to a list; '>' in KEY nests objects (so keys may hold
dots and slashes: file names); KEY:=JSON sets a JSON value (number, list, object).
Keys keep their order. OUT is written whole, then renamed into place.
"""
import json
import os
import sys


def assign(document, path, value, append):
    *parents, last = path.split(">")
    node = document
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            sys.exit(f"json_object.py: {path}: {part} is not an object")
    if append:
        node.setdefault(last, []).append(value)
    else:
        node[last] = value


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out, pairs = argv[1], argv[2:]
    document = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            sys.exit(f"json_object.py: not KEY=VALUE: {pair!r}")
        if key.endswith(":"):
            assign(document, key[:-1], json.loads(value), append=False)
        elif key.endswith("[]"):
            assign(document, key[:-2], value, append=True)
        else:
            assign(document, key, value, append=False)
    partial = out + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    os.replace(partial, out)


if __name__ == "__main__":
    main(sys.argv)
