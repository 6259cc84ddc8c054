#!/usr/bin/env bash
# The load benchmark: Examples/VaporTodo's app, built in release mode, served on the loopback on four databases
# (FluentSQLCipherDriver encrypted; unencrypted, with group commit on and off; fluent-sqlite-driver 4.9.0), driven by
# wrk with the request mix of mix.lua; writes the section "Load: the Vapor todo app under wrk" of BENCHMARKS.md
# (not part of the test command).
#
#   Benchmarks/Load/run.sh [--rounds N] [--duration S] [--warmup S] [--connections "1 16 64 256"]
#                          [--mixes "read write"] [--storage "disk tmpfs"] [--todos N] [--output FILE]
#   Benchmarks/Load/run.sh --quick        # 1 round of 3 s per run, for iteration (its section to .build/load/quick.md)
#   Benchmarks/Load/run.sh --report-only  # rewrite the section from the last run's results (after editing ANALYSIS.md)
#   Benchmarks/Load/run.sh --observability [options above]
#       the encrypted database without and with what VaporTodo reports, side by side: metrics only (swift-prometheus),
#       metrics with a tenth of the requests traced, and metrics with every request traced (swift-otel to an OTLP/HTTP
#       receiver on the loopback, Tests/Examples/otlp-traces.py);
#       writes the section "Load: observability on" of BENCHMARKS.md (its results in .build/load-observability)
#
# Every run (one database, one connection count, one mix, one storage) starts its own server on a fresh database
# file, on the repository's disk (disk: Benchmarks/Load/.build/load/data, where a server's files would be) or on
# /dev/shm (tmpfs: no fsync cost, so the drivers are measured rather than the disk), seeds it with --todos todos at boot (default 1,000), warms it up with the run's own load for --warmup seconds,
# then measures it for --duration seconds (wrk --latency, one wrk thread: the machine's cores are shared by wrk
# and the server), counting the server's fsyncs (perf). The databases take turns within each connection count and
# mix, in an order that rotates each round, so that the machine's load falls on all alike; each table shows the round
# whose load average was lowest. Defaults: 2 rounds of 5 s, two mixes (read: 80 % reads; write: 80 % writes),
# connections 1, 16, 64 and 256, both storages: about 20 minutes after a first build (BENCHMARKS.md's run: 3
# rounds, 30 minutes). wrk is installed with apt-get when missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=2
duration=5
warmup=2
connections="1 16 64 256"
mixes="read write"
todos=1000
work="$here/.build/load"
storages="disk tmpfs"
output="$root/BENCHMARKS.md"
output_given=false
report_only=false
quick=false
observability=false
command_line=$(echo "Benchmarks/Load/run.sh $*" | sed 's/ *$//')

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --mixes) mixes=$2; shift 2 ;;
    --todos) todos=$2; shift 2 ;;
    --storage) storages=$2; shift 2 ;;
    --output) output=$2; output_given=true; shift 2 ;;
    --quick) quick=true; rounds=1; duration=3; warmup=1; shift ;;
    --report-only) report_only=true; shift ;;
    --observability) observability=true; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
if $observability; then work="$here/.build/load-observability"; fi
if $quick && ! $output_given; then output="$work/quick.md"; fi

report() {
  local kind=() title="Load: the Vapor todo app under wrk"
  if $observability; then kind=(--observability); title="Load: observability on"; fi
  python3 "$here/report.py" "${kind[@]}" --results "$work/results.tsv" --facts "$work/facts.txt" \
    --notes "$here/ANALYSIS.md" --section "$work/section.md"
  python3 "$here/report.py" "${kind[@]}" --splice "$output" --section "$work/section.md"
  echo "wrote the section \"$title\" of $output"
}
if $report_only; then
  [ -f "$work/results.tsv" ] || { echo "no results in $work: run Benchmarks/Load/run.sh first" >&2; exit 1; }
  report
  exit 0
fi

if [ ! -f "$root/Vendor/build/lib/libsqlcipher.a" ]; then
  echo "no engine in Vendor/build/lib: run ./build-sqlcipher.sh first" >&2
  exit 1
fi
if ! command -v wrk >/dev/null; then
  echo "== installing wrk (apt-get)"
  if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
fi
for tool in curl python3 openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done

started=$(date +%s)
echo "== build (release)"
mkdir -p "$here/.build"
swift build -c release --package-path "$here" --scratch-path "$here/.build" --product todo-load-server \
  >"$here/.build/build.log" 2>&1 || { tail -n 40 "$here/.build/build.log" >&2; exit 1; }
if grep -F "$here/Sources/" "$here/.build/build.log" | grep ': warning: ' >/dev/null; then
  grep ': warning: ' "$here/.build/build.log" >&2
fi
server="$(swift build -c release --package-path "$here" --scratch-path "$here/.build" --show-bin-path)/todo-load-server"
built=$(date +%s)

rm -rf "$work"
mkdir -p "$work"
mkdir -p "$work/data"
tmpfs_dir=$(mktemp -d /dev/shm/sqlcipherkit-load.XXXXXX)
folder() { if [ "$1" = tmpfs ]; then echo "$tmpfs_dir"; else echo "$work/data"; fi; }
echo "$command_line" >"$work/command.txt"

# The encrypted database's key: a passphrase in a file only this user may read (VaporTodo's TODO_KEY_FILE), so
# the pool derives its key with SQLCipher's PBKDF2 once, at boot, as the app does in production.
(umask 077 && openssl rand -hex 32 >"$work/key")

# unencrypted-ungrouped: the unencrypted pool with its group commit off (issue 46), the same engine side by side.
variants=(encrypted unencrypted unencrypted-ungrouped fluent-sqlite-driver)
# --observability: encrypted-observed exports its spans to a receiver on the loopback that keeps their bytes only.
sink_pid=
if $observability; then
  variants=(encrypted encrypted-metrics encrypted-sampled encrypted-observed)
  sink_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Its file on tmpfs: the bytes it appends would otherwise share the disk with the databases being measured.
  spans_file=$tmpfs_dir/spans.bin
  python3 "$root/Tests/Examples/otlp-traces.py" serve --port "$sink_port" --out "$spans_file" &
  sink_pid=$!
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  [ -z "$sink_pid" ] || kill "$sink_pid" 2>/dev/null || true
  rm -rf "$tmpfs_dir"
}
trap cleanup EXIT

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_second=$(getconf CLK_TCK)

# Starts the server for database $1 on a fresh file; waits until it serves.
start_server() {
  local database=$1 waited=0
  rm -f "$db_dir/todo.db" "$db_dir/todo.db-wal" "$db_dir/todo.db-shm" "$db_dir/todo.db-journal"
  local environment=(TODO_LOAD_DATABASE="$database" TODO_DATABASE="$db_dir/todo.db" TODO_LOAD_SEED="$todos")
  [[ "$database" != encrypted* ]] || environment+=(TODO_KEY_FILE="$work/key")
  case "$database" in
    encrypted-observed|encrypted-sampled)
      environment+=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink_port" OTEL_SERVICE_NAME=todo-load-server) ;;
  esac
  # A tenth of the requests traced (swift-otel's head sampler; wrk sends no traceparent, so each request is a root).
  [ "$database" != encrypted-sampled ] \
    || environment+=(OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1)
  env -u TODO_KEY_CREDENTIAL -u TODO_KEY_FILE -u OTEL_TRACES_SAMPLER -u OTEL_TRACES_SAMPLER_ARG "${environment[@]}" \
    "$server" serve --env production --hostname 127.0.0.1 --port "$port" >"$work/server.log" 2>&1 &
  pid=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$port/todos?completed=true"; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge 600 ]; then
      echo "the $database server did not start:" >&2
      cat "$work/server.log" >&2
      exit 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

# Waits until the server has answered the requests still queued when wrk stopped (its CPU time stands still for
# 0.6 s; at most 20 s): Vapor's shutdown does not wait for them, and a handler that asks for `req.db` after the
# databases are shut down stops the process (Fluent force-unwraps the database).
drain_server() {
  local last now idle=0 i=0
  last=$(cpu_ticks "$pid")
  while [ "$idle" -lt 3 ] && [ "$i" -lt 100 ]; do
    sleep 0.2
    now=$(cpu_ticks "$pid")
    if [ "$now" = "$last" ]; then idle=$((idle + 1)); else idle=0; fi
    last=$now
    i=$((i + 1))
  done
}

# Stops the server with SIGTERM; "shutdown-failed" (and its log kept) when it does not exit with status 0.
stop_server() {
  local status=0
  kill -TERM "$pid"
  wait "$pid" || status=$?
  pid=
  shutdown=
  if [ "$status" != 0 ]; then
    cp "$work/server.log" "$work/failed-shutdown-$(date +%s).log"
    shutdown=shutdown-failed
  fi
}

# Whether the file is what the database should have written: encrypted, no plain SQLite header; the others, one.
check_file() {
  local database=$1 header
  header=$(head -c 15 "$db_dir/todo.db" | tr -d '\0')
  if [[ "$database" = encrypted* ]]; then
    [ "$header" != "SQLite format 3" ] && ! grep -qaF "seeded todo" "$db_dir/todo.db" && echo encrypted-file
  else
    [ "$header" = "SQLite format 3" ] && echo plain-file
  fi
}

# Counts the server's fsync and fdatasync calls while the measured run lasts (perf's syscall tracepoints, counted
# in the kernel: no stop per call, unlike strace), for the fsyncs per acknowledged write; -1 when perf cannot.
perf_pid=
syncs_start() {
  perf_pid=
  rm -f "$work/perf.csv"
  command -v perf >/dev/null || return 0
  perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "$pid" -o "$work/perf.csv" \
    2>/dev/null &
  perf_pid=$!
  sleep 0.2
}
# Sets syncs (not in a command substitution: perf must be this shell's child to be waited for).
syncs_stop() {
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  fi
  syncs=$(awk -F, '/syscalls:sys_enter_f(data)?sync/ { if ($1 ~ /^[0-9]+$/) { n += $1; seen++ } }
                  END { print (seen == 2 ? n : -1) }' "$work/perf.csv" 2>/dev/null || echo -1)
}

# The statements an observed server's /metrics (on standard input) has counted, all operations together.
operations() {
  awk 'index($0, "db_client_operation_duration_count{") == 1 { sum += $NF } END { printf "%d\n", sum }'
}

wrk_run() { # seconds connections write_percent seed
  wrk -t 1 -c "$2" -d "${1}s" --timeout 10s --latency -s "$here/mix.lua" "http://127.0.0.1:$port" \
    -- "$work/ids.txt" "$3" "$4"
}

{
  echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "Machine: $(uname -srm), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(free -g | awk '/Mem:/ {print $2}') GiB"
  echo "Swift: $(swift --version 2>/dev/null | head -1)"
  echo "wrk: $(wrk -v 2>&1 | head -1 | sed 's/ \[.*//') ($(dpkg-query -W -f '${Version}' wrk 2>/dev/null || echo '?'))"
  for storage in $storages; do
    # The disk folder relative to the repository (where the checkout is says nothing about the run).
    echo "Database files, $storage: $(folder "$storage" | sed "s|^$root/||") ($(df -T "$(folder "$storage")" | awk 'NR==2 {print $2}'))"
  done
  echo "Rounds: $rounds; per run: ${warmup} s warm-up, ${duration} s measured; connections: $connections; mixes: $mixes; seeded todos: $todos"
  echo "Load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$work/facts.txt"

printf 'round\tstorage\tmix\tconnections\tdatabase\trequests\tduration_us\tstatus_errors\tconnect_errors\tread_errors\twrite_errors\ttimeouts\tp50_us\tp90_us\tp99_us\tmax_us\tmean_us\treads\tpages\tcreates\tupdates\tdeletes\trss_boot_kb\trss_before_kb\trss_after_kb\thwm_after_kb\tcpu_s\tload1_before\tload1_after\tfile\tsyncs\n' \
  >"$work/results.tsv"

offset=0
for round in $(seq 1 "$rounds"); do
 for storage in $storages; do
  db_dir=$(folder "$storage")
  for mix in $mixes; do
    case "$mix" in
      read) write_percent=20 ;;
      write) write_percent=80 ;;
      *) echo "unknown mix $mix (read or write)" >&2; exit 64 ;;
    esac
    for c in $connections; do
      for i in "${!variants[@]}"; do
        database=${variants[$(((i + offset) % ${#variants[@]}))]}
        start_server "$database"
        grep -m1 '^engine: ' "$work/server.log" >>"$work/engines.txt" || true
        curl -sf "http://127.0.0.1:$port/todos" \
          | python3 -c 'import json, sys; print("\n".join(t["id"] for t in json.load(sys.stdin)))' >"$work/ids.txt"
        rss_boot=$(rss_kb "$pid")
        wrk_run "$warmup" "$c" "$write_percent" "$round$c$i" >/dev/null
        if [[ "$database" = encrypted-* ]]; then
          # What the observed server reported before the measured run (its boot's seed and the warm-up counted).
          operations_before=$(curl -sf "http://127.0.0.1:$port/metrics" | operations)
          spans_before=$(stat -c %s "$spans_file" 2>/dev/null || echo 0)
        fi
        load_before=$(cut -d' ' -f1 /proc/loadavg)
        rss_before=$(rss_kb "$pid")
        cpu_before=$(cpu_ticks "$pid")
        syncs_start
        wrk_run "$duration" "$c" "$write_percent" "$round$c$i" >"$work/wrk.out"
        syncs_stop
        cpu_after=$(cpu_ticks "$pid")
        rss_after=$(rss_kb "$pid")
        hwm_after=$(hwm_kb "$pid")
        load_after=$(cut -d' ' -f1 /proc/loadavg)
        cat "$work/wrk.out" >>"$work/wrk.log"
        drain_server
        observed=
        if [[ "$database" = encrypted-* ]]; then
          # What the measured run reported: /metrics counted its statements, and (traces on) spans reached the
          # receiver; with metrics only, none did.
          [ "$(curl -sf "http://127.0.0.1:$port/metrics" | operations)" -gt "$operations_before" ] || observed=,no-metrics
          spans_after=$(stat -c %s "$spans_file" 2>/dev/null || echo 0)
          if [ "$database" = encrypted-observed ] || [ "$database" = encrypted-sampled ]; then
            [ "$spans_after" -gt "$spans_before" ] || observed=$observed,no-spans
          else
            [ "$spans_after" = "$spans_before" ] || observed=$observed,unexpected-spans
          fi
        fi
        stop_server
        file=$(check_file "$database" || echo WRONG-FILE)${shutdown:+,$shutdown}$observed
        result=$(grep -m1 '^RESULT ' "$work/wrk.out") || { cat "$work/wrk.out" >&2; exit 1; }
        cpu_s=$(python3 -c "print(round(($cpu_after - $cpu_before) / $ticks_per_second, 2))")
        python3 - "$result" <<PY >>"$work/results.tsv"
import sys
fields = dict(item.split("=") for item in sys.argv[1].split()[1:])
keys = ["requests", "duration_us", "status_errors", "connect_errors", "read_errors", "write_errors", "timeouts",
        "p50_us", "p90_us", "p99_us", "max_us", "mean_us", "reads", "pages", "creates", "updates", "deletes"]
print("\t".join(["$round", "$storage", "$mix", "$c", "$database"] + [fields[k] for k in keys]
                + ["$rss_boot", "$rss_before", "$rss_after", "$hwm_after", "$cpu_s", "$load_before", "$load_after", "$file",
                   "$syncs"]))
PY
        printf '  round %s, %s, %s mix, %3s connections, %-21s %s\n' "$round" "$storage" "$mix" "$c" "$database" \
          "$(python3 -c "import sys; f = dict(i.split('=') for i in sys.argv[1].split()[1:]); print('%.0f req/s, p99 %.1f ms, errors %d' % (int(f['requests']) / int(f['duration_us']) * 1e6, int(f['p99_us']) / 1000, sum(int(f[k]) for k in ['status_errors', 'connect_errors', 'read_errors', 'write_errors', 'timeouts'])))" "$result")"
      done
      offset=$((offset + 1))
    done
  done
 done
done
finished=$(date +%s)
{
  echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "Time: build $((built - started)) s, runs $((finished - built)) s"
  echo "Command: $command_line"
  sort -u "$work/engines.txt" | sed "s/^engine: /Engine, /"
} >>"$work/facts.txt"
rm -rf "$work/data" "$work/key"
report
