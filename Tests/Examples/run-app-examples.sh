#!/usr/bin/env bash
# The app examples (Examples/VaporTodo, Examples/HummingbirdTodo) as an app team would build them: each copied
# outside the repository, its manifest pointed at the two generated packages as tagged git repositories, with the
# driver article's own `.package` lines (only their URLs changed: Tests/Support/release-repositories.sh and
# use-release-repositories.py); then its own tests (Swift Testing, through VaporTesting or HummingbirdTesting:
# create, list, read, update and delete over HTTP, the file encrypted afterwards, a wrong key refused); then its
# server, run as a service would run it:
#   - boot refused, with a message that says what to do and holds no key: no key source, a key file others can
#     read, a wrong key;
#   - the key from a systemd credential ($CREDENTIALS_DIRECTORY, as LoadCredential= provides it): a todo created
#     and listed with curl, the server stopped with SIGTERM, the file encrypted (no SQLite header, no marker), the
#     key in none of the server's output at log level trace;
#   - what an operator sees (issue 47), in that same run: /metrics (swift-prometheus) counting the create's INSERT,
#     the pool's writer waits, and holding neither the key nor the todo's title; the traces swift-otel exported to
#     an OTLP/HTTP receiver (Tests/Examples/otlp-traces.py, JSON): the request's server span, every INSERT span
#     below it in its trace, neither secret in any span, each check first seen failing on a planted copy;
#   - no sqlite-nio or sqlite-kit in the resolved graph;
#   - VaporTodo and HummingbirdTodo under load, by Tests/Examples/load-safety.py (about two and a half minutes):
#     first its controls on a stub server (a planted 500, a planted answer that kills its clients, a planted leak:
#     each must fail its check); then 8 clients creating todos, every answer a 201 and no client thread dead, the
#     server stopped mid-load with SIGTERM (exit status 0), restarted on the same file, every todo acknowledged
#     with a 201 found; the same with SIGKILL; then its memory (VmRSS) every 10,000 requests of a mix (reads, lists,
#     creates, updates, deletes) up to 100,000, growing at most 72 bytes a request + 0.5 MiB from 60,000 on; the
#     key, from a file, in none of those servers' output.
# Both examples build in one scratch folder, so that the packages they share (swift-nio, swift-nio-ssl's BoringSSL,
# async-http-client, fluent-kit, sql-kit…) compile once: SwiftPM reuses them across the two roots, and the second
# example (HummingbirdTodo) then costs about a tenth of the first's CPU time; in two folders it would cost about
# two thirds. The folder is in the temporary one, so every run is a cold one, as on a fresh clone.
#
# Needs ./build-sqlcipher.sh's dist/. Prints one "ok: NAME" or "FAIL: NAME" line per test and check, then
# "APPS: N passed, N failed"; exits 1 when anything failed. APP_EXAMPLES="VaporTodo" runs some of them only.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EXAMPLES=${APP_EXAMPLES:-FluentDriverConsumer VaporTodo HummingbirdTodo}
# The examples whose server also runs Tests/Examples/load-safety.py (about two minutes each with a debug build).
LOAD_SAFETY="VaporTodo HummingbirdTodo"
# The examples that serve /metrics and export traces (over OTLP/HTTP, when an endpoint is set), with the name of the
# request span their framework's tracing middleware gives a create (Vapor: the route; Hummingbird: its path).
declare -A OBSERVED=([VaporTodo]="POST /todos" [HummingbirdTodo]="/todos")

# shellcheck source=../Support/checks.sh
source "$ROOT/Tests/Support/checks.sh"
finish() { finish_checks APPS; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/app-examples.XXXXXX") || exit 1
SERVER=
cleanup() {
    [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
# APP_EXAMPLES_SCRATCH: a scratch folder to keep (for a warm run); by default one in $WORK, removed at the end.
SCRATCH=${APP_EXAMPLES_SCRATCH:-${FLUENT_SCRATCH:-$WORK/build}}

mkdir "$WORK/repositories"
if ! "$ROOT/Tests/Support/release-repositories.sh" "$WORK/repositories"; then
    fail "the generated packages as tagged git repositories (Tests/Support/release-repositories.sh)"
    finish
fi

# A free TCP port on the loopback interface.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Whether file $1 holds none of the strings $2…
holds_none() {
    local file=$1 text
    shift
    for text in "$@"; do
        ! grep -qaF -- "$text" "$file" || return 1
    done
}

# Whether the build log $1 shows no warning in a file under $2.
no_warnings() {
    ! grep -F -- "$2" "$1" | grep ': warning: ' >/dev/null || { grep -F -- "$2" "$1" | grep ': warning: '; return 1; }
}

# Whether SwiftPM's log $1 shows one package per identity: with the app's SQLCipherKit line and the driver's at two
# URLs it warns "Conflicting identity for sqlcipherkit" (to become an error; issue 48: the docs tell a publisher to
# build the driver with SQLCIPHERKIT_PACKAGE_URL, the app's URL).
one_identity() {
    ! grep -qi "conflicting identity" "$1" || { grep -i "conflicting identity" "$1" | cut -c1-400; return 1; }
}

# one_identity's control, before any example: an app naming a library at one URL and a package that names the same
# library (the same identity) at another, as tiny tagged git repositories; SwiftPM must warn, and one_identity must
# fail on its log (a SwiftPM that words the warning otherwise would make the check pass on everything).
identity_control() {
    local dir=$WORK/identity-control name
    mkdir -p "$dir/one/Lib/Sources/Lib" "$dir/two/Lib/Sources/Lib" "$dir/Drv/Sources/Drv" "$dir/App/Sources/App"
    for name in one two; do
        printf '// swift-tools-version: 6.0\nimport PackageDescription\nlet package = Package(name: "Lib", products: [.library(name: "Lib", targets: ["Lib"])], targets: [.target(name: "Lib")])\n' \
            >"$dir/$name/Lib/Package.swift"
        echo 'public let lib = 1' >"$dir/$name/Lib/Sources/Lib/Lib.swift"
    done
    printf '// swift-tools-version: 6.0\nimport PackageDescription\nlet package = Package(name: "Drv", products: [.library(name: "Drv", targets: ["Drv"])], dependencies: [.package(url: "file://%s/two/Lib", from: "1.0.0")], targets: [.target(name: "Drv", dependencies: [.product(name: "Lib", package: "Lib")])])\n' \
        "$dir" >"$dir/Drv/Package.swift"
    echo 'import Lib; public let drv = lib' >"$dir/Drv/Sources/Drv/Drv.swift"
    printf '// swift-tools-version: 6.0\nimport PackageDescription\nlet package = Package(name: "App", dependencies: [.package(url: "file://%s/one/Lib", from: "1.0.0"), .package(url: "file://%s/Drv", from: "1.0.0")], targets: [.executableTarget(name: "App", dependencies: [.product(name: "Drv", package: "Drv"), .product(name: "Lib", package: "Lib")])])\n' \
        "$dir" "$dir" >"$dir/App/Package.swift"
    echo 'import Drv; print(drv)' >"$dir/App/Sources/App/main.swift"
    for name in one/Lib two/Lib Drv; do
        (cd "$dir/$name" && git init -q && git add -A \
            && git -c user.name=control -c user.email=control@example.invalid commit -q -m control && git tag 1.0.0) \
            || { fail "control: one_identity: the control's repositories"; return; }
    done
    swift build --package-path "$dir/App" --scratch-path "$dir/scratch" >"$dir/resolve.log" 2>&1 </dev/null
    if one_identity "$dir/resolve.log" >/dev/null; then
        tail -n 5 "$dir/resolve.log"
        fail "control: one_identity: a library named at two URLs drew no 'Conflicting identity' warning it sees"
    else
        ok "control: one_identity: a library named at two URLs draws SwiftPM's 'Conflicting identity' warning, and the check fails on it"
    fi
}

# Whether the database $1 is encrypted: no SQLite header, and no $2… in it or its -wal and -shm files.
encrypted() {
    local db=$1 suffix
    shift
    [ -s "$db" ] && [ "$(head -c 15 "$db")" != "SQLite format 3" ] || return 1
    for suffix in "" -wal -shm; do
        [ ! -e "$db$suffix" ] || holds_none "$db$suffix" "$@" || return 1
    done
}

# Runs the server $1 with the environment in "${RUN_ENV[@]}" until it serves (the output in $WORK/server.log);
# returns 1 when it exits or does not answer within 60 seconds.
start_server() {
    local program=$1 port=$2 waited=0
    shift 2
    env "${RUN_ENV[@]}" "$program" "$@" >"$WORK/server.log" 2>&1 &
    SERVER=$!
    until curl -s -o /dev/null "http://127.0.0.1:$port/todos"; do
        kill -0 "$SERVER" 2>/dev/null && [ "$waited" -lt 600 ] || { stop_server; return 1; }
        sleep 0.1
        waited=$((waited + 1))
    done
}

# The sum of the values of file $1's lines that start with $2 and hold $3 (a Prometheus text exposition; 0 for none).
metric_sum() {
    awk -v name="$2" -v label="$3" 'index($0, name "{") == 1 && index($0, label) { sum += $NF } END { print sum + 0 }' "$1"
}

# Whether metric $2 (lines holding $3) grew by at least $4 from file $WORK/$1.metrics.before to $WORK/$1.metrics.
metric_grew() {
    local before after
    before=$(metric_sum "$WORK/$1.metrics.before" "$2" "$3")
    after=$(metric_sum "$WORK/$1.metrics" "$2" "$3")
    awk -v b="$before" -v a="$after" -v n="$4" 'BEGIN { exit !(a - b >= n) }' \
        || { echo "    $2 $3: $before before, $after after (+$4 expected)"; return 1; }
}

# Whether example $1's /metrics counted one writer wait and one committed transaction more (metric_grew).
wait_and_commit_grew() {
    metric_grew "$1" db_client_connection_wait_time_count writer 1 \
        && metric_grew "$1" sqlcipherkit_transaction_duration_count committed 1
}

# The server on port $2 serves /metrics (swift-prometheus) with the database's figures by OpenTelemetry's names:
# what example $1's create and list added since $WORK/$1.metrics.before (read before the create: the boot's migration
# already wrote), and neither the key $3 nor the todo's title $4 (a bound value) in it.
observed_metrics() {
    local name=$1 port=$2 file=$WORK/$1.metrics
    curl -sf "http://127.0.0.1:$port/metrics" >"$file"
    check "$name: /metrics counts the create's INSERT (db_client_operation_duration by db_operation_name, +1)" \
        metric_grew "$name" db_client_operation_duration_count 'db_operation_name="INSERT"' 1
    check "$name: /metrics counts the create's writer wait and committed transaction (+1 each)" \
        wait_and_commit_grew "$name"
    check "$name: /metrics holds neither the key nor the todo's title" holds_none "$file" "$3" "$4"
}

# Stops the server with SIGTERM, as systemd does; returns its exit status.
stop_server() {
    local status
    kill -TERM "$SERVER" 2>/dev/null
    wait "$SERVER"
    status=$?
    SERVER=
    return "$status"
}

# Runs the program $1 with the environment "${RUN_ENV[@]}"; whether it exits 1 and its output holds $2 and not
# $3 (a key).
refuses_boot() {
    local program=$1 expected=$2 key=$3 status
    shift 3
    env "${RUN_ENV[@]}" timeout 60 "$program" "$@" >"$WORK/boot.log" 2>&1
    status=$?
    [ "$status" = 1 ] && grep -qF -- "$expected" "$WORK/boot.log" && holds_none "$WORK/boot.log" "$key" \
        || { echo "    exit $status: $(tail -c 600 "$WORK/boot.log")"; return 1; }
}

run_example() {
    local name=$1 package=$WORK/$1 program log=$WORK/$1.test.log status line
    cp -R "$ROOT/Examples/$name" "$package"
    rm -rf "$package/.build" "$package/Package.resolved"
    python3 "$ROOT/Tests/Support/use-release-repositories.py" "$package/Package.swift" "$WORK/repositories" \
        || { fail "$name: its manifest points at the release repositories"; return; }

    swift build --build-tests --package-path "$package" --scratch-path "$SCRATCH" >"$WORK/$name.build.log" 2>&1
    status=$?
    tail -n 20 "$WORK/$name.build.log"
    if [ "$status" != 0 ]; then
        fail "$name builds (swift build --build-tests, the generated packages from file:// URLs)"
        return
    fi
    check "$name: its own sources compile with no warning" no_warnings "$WORK/$name.build.log" "$package/"
    check "$name: SwiftPM resolves one SQLCipherKit (no conflicting identity)" one_identity "$WORK/$name.build.log"

    # Its tests, without CREDENTIALS_DIRECTORY (one test expects a credential to be refused outside systemd).
    run_test_binary "$log" ' (notice|info|debug|trace) ' \
        env -u CREDENTIALS_DIRECTORY swift test --skip-build --package-path "$package" --scratch-path "$SCRATCH"
    report_swift_testing "$log" "$name: "
    require_clean_exit "$name: swift test (its test binary)" "$TEST_STATUS" "$log"

    # The server, as a service runs it.
    program="$(swift build --package-path "$package" --scratch-path "$SCRATCH" --show-bin-path)/$(tr 'A-Z' 'a-z' \
        <<<"${name%Todo}")-todo"
    local data=$WORK/$name.data port key marker
    mkdir -p "$data/credentials"
    port=$(free_port)
    local template=(--hostname 127.0.0.1 --port "{port}")
    [ "$name" != VaporTodo ] || template=(serve "${template[@]}")
    local serve=("${template[@]/\{port\}/$port}")

    key="$name key $RANDOM$RANDOM$RANDOM"
    RUN_ENV=(-u CREDENTIALS_DIRECTORY -u TODO_KEY_FILE -u TODO_KEY_CREDENTIAL TODO_DATABASE="$data/todo.db")
    check "$name: no key source stops boot, naming TODO_KEY_FILE and TODO_KEY_CREDENTIAL" \
        refuses_boot "$program" "no key source: set TODO_KEY_FILE" "$key" "${serve[@]}"
    printf '%s\n' "$key" >"$data/open-key" && chmod 644 "$data/open-key"
    RUN_ENV+=(TODO_KEY_FILE="$data/open-key")
    check "$name: a key file others can read stops boot, naming the chmod; no key in the output" \
        refuses_boot "$program" "chmod go-rwx" "$key" "${serve[@]}"
    [ ! -e "$data/todo.db" ] || fail "$name: a refused boot created no database"

    # The key from a systemd credential, as LoadCredential= provides it (a private folder, the file mode 0400).
    (umask 077 && printf '%s\n' "$key" >"$data/credentials/todo-key") && chmod 400 "$data/credentials/todo-key"
    marker="$name-marker-$RANDOM$RANDOM$RANDOM"
    RUN_ENV=(-u TODO_KEY_FILE CREDENTIALS_DIRECTORY="$data/credentials" TODO_KEY_CREDENTIAL=todo-key
             TODO_DATABASE="$data/todo.db" LOG_LEVEL=trace)
    # What an operator sees: traces exported over OTLP/HTTP to a receiver (Tests/Examples/otlp-traces.py).
    local traces=$WORK/$name.traces.jsonl receiver= otlp_token=
    if [ -n "${OBSERVED[$name]:-}" ]; then
        local tport
        tport=$(free_port)
        while [ "$tport" = "$port" ]; do tport=$(free_port); done
        python3 "$ROOT/Tests/Examples/otlp-traces.py" serve --port "$tport" --out "$traces" &
        receiver=$!
        # The collector's credentials, as an operator gives them: swift-otel read and logged every OTEL_* value at
        # its default diagnostic level (info), this one included.
        otlp_token="otlp-token-$RANDOM$RANDOM$RANDOM"
        RUN_ENV+=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$tport" OTEL_EXPORTER_OTLP_PROTOCOL=http/json
                  OTEL_BSP_SCHEDULE_DELAY=200 OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20$otlp_token")
    fi
    if start_server "$program" "$port" "${serve[@]}"; then
        [ -z "$receiver" ] || curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/$name.metrics.before"
        curl -sf -X POST -H 'Content-Type: application/json' -d "{\"title\": \"$marker\"}" \
            "http://127.0.0.1:$port/todos" >"$WORK/created.json"
        check "$name: with the key from a systemd credential, a todo created and listed with curl" \
            grep -qF -- "$marker" <(curl -sf "http://127.0.0.1:$port/todos")
        [ -z "$receiver" ] || observed_metrics "$name" "$port" "$key" "$marker"
        check "$name: the server stops on SIGTERM with status 0" stop_server
        check "$name: after it, the file is encrypted (no SQLite header, no marker)" encrypted "$data/todo.db" "$marker"
        check "$name: the key is in none of the server's output (log level trace)" holds_none "$WORK/server.log" "$key"
        if [ -n "$receiver" ]; then
            check "$name: the OTLP exporter's credentials (OTEL_EXPORTER_OTLP_HEADERS) are in none of its output" \
                holds_none "$WORK/server.log" "$otlp_token"
            if [ -s "$traces" ]; then
                python3 "$ROOT/Tests/Examples/otlp-traces.py" check "$traces" --route "${OBSERVED[$name]}" \
                    --secret "$key" --secret "$marker" >"$WORK/$name.traces.log" 2>&1
                status=$?
                relay_checks "$name: traces: " "$WORK/$name.traces.log"
                [ "$status" = 0 ] || grep -q '^FAIL: ' "$WORK/$name.traces.log" \
                    || fail "$name: traces: otlp-traces.py check exited $status"
            else
                fail "$name: traces: the server exported spans to the OTLP/HTTP receiver"
            fi
        fi
    else
        fail "$name: with the key from a systemd credential, the server starts: $(tail -c 600 "$WORK/server.log")"
    fi
    [ -z "$receiver" ] || { kill "$receiver" 2>/dev/null; wait "$receiver" 2>/dev/null; }
    (umask 077 && printf 'another key\n' >"$data/credentials/other-key") && chmod 400 "$data/credentials/other-key"
    RUN_ENV=(-u TODO_KEY_FILE CREDENTIALS_DIRECTORY="$data/credentials" TODO_KEY_CREDENTIAL=other-key
             TODO_DATABASE="$data/todo.db")
    check "$name: a wrong key stops boot; no key in the output" \
        refuses_boot "$program" "The key does not open" "another key" "${serve[@]}"

    [[ " $LOAD_SAFETY " != *" $name "* ]] || load_safety "$name" "$program" "${template[@]}"

    check "$name: the resolved graph holds neither sqlite-nio nor sqlite-kit" \
        holds_none "$package/Package.resolved" sqlite-nio sqlite-kit
}

# Nothing lost under load, and no memory kept per request: Tests/Examples/load-safety.py runs its controls on a
# stub server, then drives the server $2 (its arguments $3…, "{port}" for the port) with concurrent creates, stops it
# with SIGTERM and then SIGKILL mid-load and finds every acknowledged todo after a restart on the same file, then
# measures its memory every 10,000 requests up to 100,000; its ok:/FAIL: lines are counted here, named "$1: …". The
# key from a file (mode 0600), in none of the servers' output.
load_safety() {
    local name=$1 program=$2 data=$WORK/$1.load log=$WORK/$1.load.log key status line start=$SECONDS
    shift 2
    mkdir -p "$data"
    key="$name load key $RANDOM$RANDOM$RANDOM"
    (umask 077 && printf '%s\n' "$key" >"$data/key")
    python3 "$ROOT/Tests/Examples/load-safety.py" --data "$data" --key-file "$data/key" -- "$program" "$@" >"$log" 2>&1
    status=$?
    relay_checks "$name: " "$log"
    [ "$status" = 0 ] || grep -q '^FAIL: ' "$log" || fail "$name: load-safety.py exited $status"
    check "$name: the key is in none of the loaded servers' output" holds_none <(cat "$data"/server-*.log) "$key"
    echo "    load-safety.py: $((SECONDS - start)) s"
}

# Examples/FluentDriverConsumer, the smallest app: FluentKit models (timestamps, an enum, JSON fields, a parent and
# its children, unique and foreign-key constraints) on an encrypted file, and a wrong key refused.
run_consumer() {
    local package=$WORK/FluentDriverConsumer data=$WORK/consumer-data marker program line
    cp -R "$ROOT/Examples/FluentDriverConsumer" "$package"
    rm -rf "$package/.build" "$package/Package.resolved"
    python3 "$ROOT/Tests/Support/use-release-repositories.py" "$package/Package.swift" "$WORK/repositories" \
        || { fail "FluentDriverConsumer: its manifest points at the release repositories"; return; }
    if ! swift build --package-path "$package" --scratch-path "$SCRATCH" >"$WORK/consumer.build.log" 2>&1; then
        tail -n 20 "$WORK/consumer.build.log"
        fail "FluentDriverConsumer builds (the generated packages from file:// URLs)"
        return
    fi
    check "FluentDriverConsumer: its own sources compile with no warning" \
        no_warnings "$WORK/consumer.build.log" "$package/"
    check "FluentDriverConsumer: SwiftPM resolves one SQLCipherKit (no conflicting identity)" \
        one_identity "$WORK/consumer.build.log"
    program="$(swift build --package-path "$package" --scratch-path "$SCRATCH" --show-bin-path)/fluent-consumer"
    mkdir -p "$data"
    marker="fluent-marker-$RANDOM$RANDOM$RANDOM"
    env FLUENT_CONSUMER_KEY="consumer $RANDOM$RANDOM" "$program" "$data" "$marker" >"$WORK/consumer.log" 2>&1 \
        || fail "FluentDriverConsumer exits 0: $(tail -c 600 "$WORK/consumer.log")"
    for line in "children 1 genre fiction pages 300" "timestamp true" "unique enforced" "foreign key enforced" \
        "wrong key refused"; do
        check "FluentDriverConsumer: $line" grep -qF -- "$line" "$WORK/consumer.log"
    done
    check "FluentDriverConsumer: the file is encrypted (no SQLite header, no marker)" encrypted "$data/fluent.db" "$marker"
    check "FluentDriverConsumer: the resolved graph holds neither sqlite-nio nor sqlite-kit" \
        holds_none "$package/Package.resolved" sqlite-nio sqlite-kit
}

# The driver catalogue's Swift examples (issue 48), as a package Tests/Docs/check-examples.py --driver-package
# writes (one executable target per article: its blocks in order after their `example setup` comments), on the same
# release repositories and the Moving article's lines, built after VaporTodo in the same scratch folder (Vapor is
# compiled by then: seconds a target). First an article as printed must build and its copy with one method
# misspelled (MisspelledControl) must not; then every article, one "ok:"/"FAIL:" line each.
# Builds target $2 of package $1 in the shared scratch folder, its log in $WORK/DriverArticles.$2.log; whether it built.
build_article_target() {
    swift build --package-path "$1" --scratch-path "$SCRATCH" --target "$2" >"$WORK/DriverArticles.$2.log" 2>&1 </dev/null
}

run_driver_articles() {
    local package=$WORK/DriverArticles target
    python3 "$ROOT/Tests/Docs/check-examples.py" --driver-package "$package" \
        || { fail "DriverArticles: the driver catalogue's examples as a package (check-examples.py --driver-package)"; return; }
    python3 "$ROOT/Tests/Support/use-release-repositories.py" "$package/Package.swift" "$WORK/repositories" \
        || { fail "DriverArticles: its manifest points at the release repositories"; return; }
    target=$(head -n1 "$package/targets")
    if ! build_article_target "$package" "$target" || ! one_identity "$WORK/DriverArticles.$target.log"; then
        tail -n 20 "$WORK/DriverArticles.$target.log"
        fail "DriverArticles: control: $target compiles as printed (so a failure below is the misspelling's)"
    elif build_article_target "$package" MisspelledControl; then
        fail "DriverArticles: control: $target with one method misspelled builds: the check cannot fail"
    elif ! grep -q "Misspelled" "$WORK/DriverArticles.MisspelledControl.log"; then
        tail -n 20 "$WORK/DriverArticles.MisspelledControl.log"
        fail "DriverArticles: control: $target with one method misspelled failed for another reason"
    else
        ok "DriverArticles: control: $target compiles as printed, and not with one method misspelled"
    fi
    while IFS= read -r target; do
        [ -n "$target" ] || continue
        if build_article_target "$package" "$target"; then
            ok "DriverArticles: the driver catalogue's ${target%Article}.md examples compile"
        else
            tail -n 20 "$WORK/DriverArticles.$target.log"
            fail "DriverArticles: the driver catalogue's ${target%Article}.md examples compile"
        fi
    done <"$package/targets"
}

# What each example must have passed at least (its tests and checks when this was written; issue 45 added
# load-safety.py's four controls and its two "every create answered 201" checks; issue 47 each app's two /metrics
# tests, three /metrics checks, six traces lines, three of them controls, and the exporter's credentials in no output):
# an example that silently runs less fails.
declare -A MINIMUM=([FluentDriverConsumer]=9 [VaporTodo]=37 [HummingbirdTodo]=37)
identity_control
for example in $EXAMPLES; do
    if [ "$example" = FluentDriverConsumer ]; then run_consumer; else run_example "$example"; fi
    require_at_least "$example: " "${MINIMUM[$example]:-1}" "tests and checks"
done
# With every example (not a narrowed APP_EXAMPLES), after VaporTodo: 1 control and 3 articles.
if [ -z "${APP_EXAMPLES:-}" ]; then
    run_driver_articles
    require_at_least "DriverArticles: " 4 "controls and articles"
fi
finish
