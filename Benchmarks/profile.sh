#!/usr/bin/env bash
# Instruction counts (callgrind) of every variant of the four workloads, measured part only: the "Profiles" table
# of BENCHMARKS.md (Benchmarks/ANALYSIS.md). Counts do not depend on the machine's load.
#
#   Benchmarks/profile.sh [WORKLOAD...]     # 1-4, default all; prints one line per run, then a Markdown table
#
# Each run is `valgrind --tool=callgrind --toggle-collect='*SideByC0O4time*'` (the mangled SideBySide.time, which
# wraps exactly the measured code) on WorkloadProfile, stripped of DWARF (valgrind 3.19 cannot read the
# toolchain's DWARF 5). Runs go two at a time; the whole set takes about 15 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(1 2 3 4)
command -v valgrind >/dev/null || { echo "valgrind is missing: ./build-sqlcipher.sh --test-tools installs it" >&2; exit 1; }

# PROFILE_NO_BUILD=1: use the WorkloadProfile already built (for example while run.sh holds the build folder).
[ -n "${PROFILE_NO_BUILD:-}" ] || swift build -c release --package-path "$here" --product WorkloadProfile >/dev/null
out="$here/.build/profile"
rm -rf "$out"
mkdir -p "$out"
binary="$out/WorkloadProfile"
cp "$here/.build/release/WorkloadProfile" "$binary"
strip -g "$binary"

variants=("plain" "raw C plain" "plain, array arguments" "encrypted" "raw C encrypted" "encrypted, array arguments"
  "crypto floor" "crypto, contexts per page")
# PROFILE_SKIP="3:encrypted" leaves out the encrypted variants of workload 3 (about 10 billion instructions each).
skip=${PROFILE_SKIP:-}
run_one() {
  local workload=$1 variant=$2 file
  file="$out/w$workload-${variant//[ ,]/_}"
  LD_LIBRARY_PATH="$here/.build/release" valgrind --tool=callgrind --callgrind-out-file="$file.out" --toggle-collect='*SideByC0O4time*' \
    "$binary" "$workload" "$variant" >"$file.log" 2>&1 || { echo "failed: $workload $variant" >&2; cat "$file.log" >&2; return 1; }
  # "Collected : N" is the count of the toggled (measured) part.
  sed -n 's/^==[0-9]*== Collected : //p' "$file.log" >"$file.count"
}
jobs_running=0
for workload in "${workloads[@]}"; do
  for variant in "${variants[@]}"; do
    # The scan has no argument-list form: its "array arguments" variant is the same code.
    [ "$workload" = 2 ] && [[ "$variant" == *"array arguments" ]] && continue
    # The crypto floor is measured beside the reads only.
    [[ "$variant" == crypto* ]] && [ "$workload" != 2 ] && [ "$workload" != 3 ] && continue
    [ -n "$skip" ] && [ "$workload" = "${skip%%:*}" ] && [[ "$variant" == *"${skip#*:}"* ]] && continue
    run_one "$workload" "$variant" &
    jobs_running=$((jobs_running + 1))
    if [ "$jobs_running" -ge 2 ]; then wait -n; jobs_running=$((jobs_running - 1)); fi
  done
done
wait

count() { local f="$out/w$1-${2//[ ,]/_}.count"; [ -s "$f" ] && cat "$f" || echo 0; }
millions() { awk -v n="$1" 'BEGIN { printf "%\047.1f M", n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "-" }'; }
names=("" "1 bulk insert" "2 full scan" "3 point selects" "4 single-row transactions")
echo "| Workload | plain | raw C plain | ratio | plain, array arguments | ratio | encrypted | raw C encrypted | ratio | encrypted, array arguments | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for workload in "${workloads[@]}"; do
  p=$(count "$workload" "plain"); rp=$(count "$workload" "raw C plain"); ap=$(count "$workload" "plain, array arguments")
  e=$(count "$workload" "encrypted"); re=$(count "$workload" "raw C encrypted"); ae=$(count "$workload" "encrypted, array arguments")
  line="| ${names[$workload]} | $(millions "$p") | $(millions "$rp") | $(ratio "$p" "$rp")"
  if [ "$workload" = 2 ]; then line+=" | – | –"; else line+=" | $(millions "$ap") | $(ratio "$ap" "$rp")"; fi
  line+=" | $(millions "$e") | $(millions "$re") | $(ratio "$e" "$re")"
  if [ "$workload" = 2 ]; then line+=" | – | – |"; else line+=" | $(millions "$ae") | $(ratio "$ae" "$re") |"; fi
  echo "$line"
done

# Encryption against the crypto floor, in instructions per page: the encrypted run's extra over plain, divided by
# the pages it read from the file (counted by the floor variants' run, "[count] decrypted pages, …"), beside the
# floor's own instructions per page (HMAC-SHA512 + AES-256-CBC through libcrypto, contexts reused) and the same
# with contexts set up for every page, as SQLCipher calls libcrypto.
pages() { sed -n 's/^\[count\] decrypted pages, .*: //p' "$out/w$1-crypto_floor.log" 2>/dev/null | head -1; }
per_page() { awk -v a="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%\047.0f", a / p; else printf "-" }'; }
extra_ratio() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (f > 0) printf "%.2f", (a - b) / f; else printf "-" }'; }
floor_rows=""
for workload in "${workloads[@]}"; do
  { [ "$workload" = 2 ] || [ "$workload" = 3 ]; } || continue
  n=$(pages "$workload"); [ -n "$n" ] || continue
  p=$(count "$workload" "plain"); rp=$(count "$workload" "raw C plain")
  e=$(count "$workload" "encrypted"); re=$(count "$workload" "raw C encrypted")
  f=$(count "$workload" "crypto floor"); fc=$(count "$workload" "crypto, contexts per page")
  floor_rows+="| ${names[$workload]} | $(printf "%'d" "$n") | $(per_page $((e - p)) "$n") | $(per_page $((re - rp)) "$n")"
  floor_rows+=" | $(per_page "$f" "$n") | $(per_page "$fc" "$n") | $(extra_ratio "$e" "$p" "$f") | $(extra_ratio "$re" "$rp" "$f") |"$'\n'
done
if [ -n "$floor_rows" ]; then
  echo
  echo "| Workload | pages read | SQLCipherKit extra / page | raw C extra / page | crypto floor / page | contexts per page / page | SQLCipherKit extra / floor | raw C extra / floor |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  printf "%s" "$floor_rows"
fi
