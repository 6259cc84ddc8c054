#!/usr/bin/env python3
"""Writes the third-party notices of one dist/ artifact: one section per component inside it, each with the
licence text taken at build time from the pinned source tarball or the system (never a copy committed here).

    notices.py --out FILE --artifact NAME --intro TEXT --component 'TITLE|LICENCE|FILE[,FILE...]' ...

A component whose files are all missing fails the build: an artifact never ships without the notice of what
it contains.
"""
import argparse
import os
import sys

RULE = "=" * 100


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--intro", required=True)
    parser.add_argument("--component", action="append", default=[],
                        help="TITLE|LICENCE|FILE[,FILE...]: the component, its licence's name, the files to copy")
    args = parser.parse_args()

    parts = [f"Third-party notices for {args.artifact}", "", args.intro, ""]
    for spec in args.component:
        try:
            title, licence, files = spec.split("|", 2)
        except ValueError:
            sys.exit(f"notices.py: not TITLE|LICENCE|FILES: {spec!r}")
        texts = []
        for path in files.split(","):
            if path and os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as handle:
                    texts.append((path, handle.read().rstrip() + "\n"))
        if not texts:
            sys.exit(f"notices.py: no licence text found for {title} (looked for: {files}); "
                     "refusing to write notices without it")
        parts += [RULE, f"{title}", f"Licence: {licence}", RULE, ""]
        for path, text in texts:
            parts += [f"(from {os.path.basename(path)})", "", text]
    partial = args.out + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts))
    os.replace(partial, args.out)


if __name__ == "__main__":
    main()
