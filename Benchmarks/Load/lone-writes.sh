#!/usr/bin/env bash
# A lone write's cost with group commit on and off, in instructions (load-independent): builds lone-writes (release)
# and runs it under valgrind --tool=callgrind with group commit on (grouped) and off (ungrouped), each with COUNT
# writes and with 3 x COUNT on a fresh file on /dev/shm; the difference over 2 x COUNT is the instructions one write
# costs (every thread of the process counted: the task, the pool's worker threads, the engine), so the start-up,
# the pool's opening, the schema and the runtime's first look-ups of each type cancel out. Prints both and their
# ratio. Not part of the test command (BENCHMARKS.md's load section quotes it); valgrind is installed with apt-get
# when missing.
#
#   Benchmarks/Load/lone-writes.sh [COUNT]     # default 300
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-300}
if ! command -v valgrind >/dev/null; then
  echo "== installing valgrind (apt-get)"
  if [ "$(id -u)" = 0 ]; then apt-get install -y valgrind >/dev/null; else sudo apt-get install -y valgrind >/dev/null; fi
fi
swift build -c release --package-path "$here" --scratch-path "$here/.build" --product lone-writes >/dev/null
binary="$(swift build -c release --package-path "$here" --scratch-path "$here/.build" --show-bin-path)/lone-writes"
work=$(mktemp -d /dev/shm/sqlcipherkit-lone.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The instructions callgrind collected in one run of lone-writes MODE N.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.$1.$2" "$binary" "$1" "$2" "$work" \
    2>"$work/valgrind.log" || { cat "$work/valgrind.log" >&2; exit 1; }
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$work/valgrind.log"
}
declare -A per_write
for mode in grouped ungrouped; do
  base=$(instructions "$mode" "$count")
  full=$(instructions "$mode" $((3 * count)))
  [ -n "$base" ] && [ -n "$full" ] || { echo "no instruction count from callgrind" >&2; exit 1; }
  per_write[$mode]=$(( (full - base) / (2 * count) ))
  echo "$mode: $base instructions with $count writes, $full with $((3 * count)): ${per_write[$mode]} per write"
done
python3 -c "import sys; g, u = int(sys.argv[1]), int(sys.argv[2]); print(f'grouped / ungrouped, instructions per lone write: {g / u:.3f}')" \
  "${per_write[grouped]}" "${per_write[ungrouped]}"
