#!/usr/bin/env bash
# Runs SQLCipherKit's benchmarks and writes BENCHMARKS.md at the repository root (not part of the test command).
#
#   Benchmarks/run.sh [--passes N] [--rounds N] [--output FILE]
#   Benchmarks/run.sh --report-only     # rewrite BENCHMARKS.md from the last run's samples (after editing ANALYSIS.md)
#   Benchmarks/run.sh --fluent-only     # only FluentBenchmarks, for iteration: writes its section alone to
#                                       # Benchmarks/.build/benchmark-samples/fluent-only.md unless --output is given
#
# Each pass is one `swift package benchmark` run of the benchmark executables (SQLCipherKit's, GRDB's, Fluent's); each
# benchmark in it measures every variant of a workload side by side, in rounds (SideBySide in
# Support/BenchmarkSupport). Defaults: 2 passes of 7 rounds, 6-8 minutes on a 2-core machine after a first
# build of about 5. The hand-written analysis (Benchmarks/ANALYSIS.md) is appended to the generated tables. The
# samples stay in Benchmarks/.build/benchmark-samples/ (gitignored) until the next run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
passes=2
rounds=7
output="$root/BENCHMARKS.md"
report_only=false
fluent_only=false
output_given=false
command_line=$(echo "Benchmarks/run.sh $*" | sed 's/ *$//')

while [ $# -gt 0 ]; do
  case "$1" in
    --passes) passes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --output) output=$2; output_given=true; shift 2 ;;
    --fluent-only) fluent_only=true; shift ;;
    --report-only) report_only=true; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done

if [ ! -f "$root/Vendor/build/lib/libsqlcipher.a" ]; then
  echo "no engine in Vendor/build/lib: run ./build-sqlcipher.sh first" >&2
  exit 1
fi
if ! [ -f /usr/include/sqlite3.h ]; then
  # GRDB and the system-SQLite C baseline build against the system's SQLite.
  echo "the system's SQLite headers are missing: apt-get install libsqlite3-dev" >&2
  exit 1
fi

work="$here/.build/benchmark-samples"
report() {
  local mode=()
  if [ -f "$work/fluent-only" ]; then
    mode=(--fluent-only)
    $output_given || output="$work/fluent-only.md"
  fi
  swift build -c release --package-path "$here" --product BenchmarkReport >/dev/null
  # The load benchmark's sections (Benchmarks/Load/run.sh, and its --observability) are not this run's: kept.
  local load=false observed=false
  ! python3 "$here/Load/report.py" --extract "$output" --section "$work/load-section.md" || load=true
  ! python3 "$here/Load/report.py" --observability --extract "$output" --section "$work/observed-section.md" \
    || observed=true
  "$here/.build/release/BenchmarkReport" --output "$output" --facts "$work/facts" --machine "$work/machine.txt" \
    --command "$(cat "$work/command.txt")" --notes "$here/ANALYSIS.md" "${mode[@]}" "$work"/pass*/
  ! $load || python3 "$here/Load/report.py" --splice "$output" --section "$work/load-section.md"
  ! $observed || python3 "$here/Load/report.py" --observability --splice "$output" --section "$work/observed-section.md"
}
if $report_only; then
  [ -f "$work/machine.txt" ] || { echo "no samples in $work: run Benchmarks/run.sh first" >&2; exit 1; }
  report
  exit 0
fi
rm -rf "$work"
mkdir -p "$work/facts"
echo "$command_line" >"$work/command.txt"
targets=()
products=()
if $fluent_only; then
  touch "$work/fluent-only"
  targets=(--target FluentBenchmarks)
  products=(--product FluentBenchmarks)
fi

seconds() { date +%s; }
# The version Package.resolved pins for a package identity (e.g. sqlite-nio), or "?".
resolved_version() {
  python3 -c 'import json, sys
pins = json.load(open(sys.argv[1])).get("pins", [])
print(next((p["state"].get("version", "?") for p in pins if p["identity"] == sys.argv[2]), "?"))' "$here/Package.resolved" "$1" 2>/dev/null || echo "?"
}
started=$(seconds)
echo "== build (release)"
swift build -c release --package-path "$here" "${products[@]}" >/dev/null
built=$(seconds)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for pass in $(seq 1 "$passes"); do
  echo "== pass $pass of $passes ($rounds rounds per benchmark)"
  mkdir -p "$work/pass$pass"
  # --disable-sandbox: the benchmarks write their databases under TMPDIR and the samples go to $work.
  BENCHMARK_ROUNDS=$rounds BENCHMARK_FACTS_DIR="$work/facts" \
    swift package --package-path "$here" --disable-sandbox --allow-writing-to-package-directory \
    benchmark "${targets[@]}" --format histogramSamples --path "$work/pass$pass" --no-progress >"$work/pass$pass.log" 2>&1 || {
      cat "$work/pass$pass.log" >&2
      exit 1
    }
done
finished=$(seconds)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "Machine: $(uname -srm), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "Swift: $(swift --version 2>/dev/null | head -1)"
  engine_versions=$(python3 -c 'import json, sys; pin = json.load(open(sys.argv[1])); print("SQLCipher %s, SQLite %s" % (pin.get("sqlcipherVersion", "?"), pin.get("sqliteVersion", "?")))' "$root/Vendor/build/pin.json" 2>/dev/null || echo "versions in Vendor/build/pin.json")
  echo "SQLCipherKit's engine: Vendor/build/lib/libsqlcipher.a ($engine_versions; flags in Vendor/sqlcipher.pin)"
  echo "System SQLite (GRDB's engine): libsqlite3-0 $(dpkg-query -W -f '${Version}' libsqlite3-0 2>/dev/null || echo unknown)"
  echo "fluent-sqlite-driver's engine: sqlite-nio $(resolved_version sqlite-nio)'s bundled SQLite (fluent-sqlite-driver $(resolved_version fluent-sqlite-driver), sqlite-kit $(resolved_version sqlite-kit), fluent-kit $(resolved_version fluent-kit))"
  echo "Database files: $(dirname "$(mktemp -u)") ($(df -T "$(dirname "$(mktemp -u)")" | awk 'NR==2 {print $2}')); the Fluent benchmark's: ${FLUENT_BENCHMARK_DIR:-/dev/shm} ($(df -T "${FLUENT_BENCHMARK_DIR:-/dev/shm}" | awk 'NR==2 {print $2}'))"
  echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after (the machine is shared: other work runs beside the benchmarks)"
  echo "Time: build $((built - started)) s, benchmarks $((finished - built)) s"
} >"$work/machine.txt"

report
