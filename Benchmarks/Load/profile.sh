#!/usr/bin/env bash
# Where a load-benchmark server's time goes: one server (as run.sh starts it, on a fresh seeded file), loaded by wrk
# with mix.lua while perf samples it (software clock, call graphs), then its top functions by self time and a
# breakdown by component (the engine's codec and crypto, the rest of SQLite, Fluent and SQLKit, NIO and Vapor, the
# kernel...), and the server's own latency by request kind (a read, the page, a create, an update, a delete, all
# writes: RouteTimings.swift), which tells a tail made by writes waiting for the writer from one made by reads.
# Run Benchmarks/Load/run.sh first (it builds the server).
#
#   Benchmarks/Load/profile.sh DATABASE MIX CONNECTIONS [STORAGE] [SECONDS]
#     DATABASE: encrypted | encrypted-metrics | encrypted-sampled | encrypted-observed | unencrypted |
#     unencrypted-ungrouped | fluent-sqlite-driver; MIX: read | write | reads-only (mix.lua with no writes);
#     STORAGE: disk | tmpfs (default). The traced variants export to a receiver on the loopback, as run.sh's do.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
database=${1:?database}; mix=${2:?mix}; connections=${3:?connections}; storage=${4:-tmpfs}; seconds=${5:-8}
server="$(swift build -c release --package-path "$here" --scratch-path "$here/.build" --show-bin-path)/todo-load-server"
[ -x "$server" ] || { echo "no server: run Benchmarks/Load/run.sh first" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }
# PROFILE_WORK: where its files go (default .build/profile; observing-cost.py compares two such folders).
work=${PROFILE_WORK:-"$here/.build/profile"}
rm -rf "$work" && mkdir -p "$work"
if [ "$storage" = tmpfs ]; then data=$(mktemp -d /dev/shm/sqlcipherkit-load.XXXXXX); else data="$work/data"; mkdir -p "$data"; fi
(umask 077 && openssl rand -hex 32 >"$work/key")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
environment=(TODO_LOAD_DATABASE="$database" TODO_DATABASE="$data/todo.db" TODO_LOAD_SEED=1000
             PROFILE_ROUTE_TIMINGS="$work/timings.txt")
[[ "$database" != encrypted* ]] || environment+=(TODO_KEY_FILE="$work/key")
sink_pid=
case "$database" in
  encrypted-observed|encrypted-sampled)
    sink_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    python3 "$here/../../Tests/Examples/otlp-traces.py" serve --port "$sink_port" --out "$work/spans.bin" &
    sink_pid=$!
    environment+=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink_port" OTEL_SERVICE_NAME=todo-load-server) ;;
esac
[ "$database" != encrypted-sampled ] \
  || environment+=(OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1)
env -u TODO_KEY_CREDENTIAL -u TODO_KEY_FILE -u OTEL_TRACES_SAMPLER -u OTEL_TRACES_SAMPLER_ARG "${environment[@]}" \
  "$server" serve --env production --hostname 127.0.0.1 --port "$port" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" $sink_pid 2>/dev/null || true; [ "$storage" != tmpfs ] || rm -rf "$data"' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$port/todos?completed=true"; do kill -0 "$pid"; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/todos" | python3 -c 'import json, sys; print("\n".join(t["id"] for t in json.load(sys.stdin)))' >"$work/ids.txt"
case "$mix" in read) percent=20 ;; write) percent=80 ;; reads-only) percent=0 ;; *) echo "mix: read, write or reads-only" >&2; exit 64 ;; esac
wrk -t 1 -c "$connections" -d 2s --timeout 10s -s "$here/mix.lua" "http://127.0.0.1:$port" -- "$work/ids.txt" "$percent" 1 >/dev/null
perf record -q -F 499 -e cpu-clock --call-graph dwarf,16384 -p "$pid" -o "$work/perf.data" -- sleep "$seconds" 2>/dev/null &
perf_pid=$!
wrk -t 1 -c "$connections" -d "${seconds}s" --timeout 10s --latency -s "$here/mix.lua" "http://127.0.0.1:$port" \
  -- "$work/ids.txt" "$percent" 1 | grep '^RESULT' | tee "$work/result.txt"
wait "$perf_pid" || true
# The server writes its timings when it stops: after it has answered what wrk left queued.
sleep 1
kill -TERM "$pid" && wait "$pid" || true
perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' \
  | swift demangle >"$work/self.txt" || true
perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' \
  | swift demangle >"$work/children.txt" || true
echo "== $database, $mix mix, $connections connections, $storage: $(wc -l <"$work/self.txt") functions sampled"
echo "== top functions by self time"
head -20 "$work/self.txt" | swift demangle --simplified | sed -E 's/ +/ /g' | cut -c1-150
echo "== self time by component"
python3 "$here/components.py" <"$work/self.txt"
echo "== inclusive time (with what they call) of the steps that matter"
python3 "$here/components.py" --inclusive <"$work/children.txt"
echo "== the server's latency by request kind (from its first middleware to the response; the measured run and its warm-up)"
column -t "$work/timings.txt" 2>/dev/null || cat "$work/timings.txt"
