# shellcheck shell=bash
# Tests/Fuzz/campaign.sh: fuzz.sh --campaign and --campaign-api (sourced by fuzz.sh after its build; uses its
# OUT, SEEDS, ROOT, RUN_ENV, SECONDS_TO_RUN, SECONDS_GIVEN, failure_summary, run_regressions and
# run_differential).
#
# --campaign: hours of fuzzing that add up across runs. The corpus lives in the campaign folder (default
# Vendor/cache/fuzz-campaign/, gitignored with the rest of Vendor/cache/) and is minimized (libFuzzer -merge=1)
# before and after each run, seeds merged in. The fuzzer restarts after each finding until the time is used, so
# one finding does not end a campaign. Every FUZZ_SAMPLE_SECONDS (300) a line of coverage.tsv records the time,
# inputs run, edges, features and corpus size. Each distinct finding (by its sanitizer summary) is listed in
# findings.tsv with its input and the command that replays it; campaign.log names every run.
#
# --campaign-api: the Swift API fuzz (Tests/SQLCipherKitTests/Reliability/APIFuzzTests.swift) in a loop, a new
# RELIABILITY_SEED each round, for SECONDS; one line per round in api.tsv, a failing seed in findings.tsv with
# the command that replays it.

CAMPAIGN_DIR=${FUZZ_CAMPAIGN_DIR:-$ROOT/Vendor/cache/fuzz-campaign}
SAMPLE_SECONDS=${FUZZ_SAMPLE_SECONDS:-300}
# libFuzzer's per-input time-out. A campaign runs niced beside other work: a `PRAGMA rekey` with a passphrase
# (PBKDF2, 256,000 iterations, ~1.5 s of CPU under ASan) took over 10 s of wall time at nice 19 on a loaded
# 2-core machine, and the test command's 10 s reported it as a time-out. 30 s keeps real hangs (the harness
# stops statements after 3 s of wall time) apart from a starved CPU.
CAMPAIGN_TIMEOUT=${FUZZ_TIMEOUT:-30}

campaign_note() { printf '%s %s\n' "$(date -u +%FT%TZ)" "$*" | tee -a "$CAMPAIGN_DIR/campaign.log"; }

# Minimizes the corpus into a fresh folder (libFuzzer keeps the smallest inputs that reach all the features of
# corpus + seeds) and swaps it in.
minimize_corpus() {
    local corpus=$CAMPAIGN_DIR/corpus merged=$CAMPAIGN_DIR/corpus.merging before after
    before=$(find "$corpus" -type f | wc -l)
    rm -rf "$merged"
    mkdir -p "$merged"
    if ! "${RUN_ENV[@]}" "$OUT/fuzz_engine" -merge=1 -timeout="$CAMPAIGN_TIMEOUT" -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$CAMPAIGN_DIR/findings/merge-" "$merged" "$corpus" "$SEEDS" \
        >"$CAMPAIGN_DIR/logs/merge-$(date -u +%Y%m%dT%H%M%S).log" 2>&1; then
        campaign_note "minimize: libFuzzer's merge failed (an input crashes? see logs/); corpus kept as it was"
        rm -rf "$merged"
        return 0
    fi
    rm -rf "$corpus"
    mv "$merged" "$corpus"
    after=$(find "$corpus" -type f | wc -l)
    campaign_note "minimize: corpus $before -> $after inputs (seeds merged in)"
}

# Appends one coverage sample (from the newest libFuzzer status line of $1) to coverage.tsv every
# SAMPLE_SECONDS until killed. $2: the campaign's start (epoch), $3: inputs run by the earlier runs.
sample_coverage() {
    local log=$1 start=$2 base=$3 line runs cov ft corp
    while sleep "$SAMPLE_SECONDS"; do
        line=$(grep -aE '^#[0-9]+[[:space:]].* cov: ' "$log" | tail -n 1) || continue
        runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$line")
        cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
        ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
        corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$line")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(($(date +%s) - start))" "$((base + runs))" \
            "$cov" "$ft" "$corp" >>"$CAMPAIGN_DIR/coverage.tsv"
    done
}

# Records the finding of a run's log (once per distinct sanitizer summary) in findings.tsv.
record_finding() {
    local log=$1 artifact summary
    artifact=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
    summary=$(failure_summary "$log")
    [ -n "$artifact" ] || artifact="(no input written; log $log)"
    if [ -f "$CAMPAIGN_DIR/findings.tsv" ] && cut -f3 "$CAMPAIGN_DIR/findings.tsv" | grep -xF "$summary" >/dev/null; then
        campaign_note "finding again (already listed): $summary: $artifact"
    else
        printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$artifact" "$summary" \
            "Tests/Fuzz/fuzz.sh --reproduce $artifact" >>"$CAMPAIGN_DIR/findings.tsv"
        campaign_note "NEW FINDING: $summary"
        campaign_note "  input: $artifact"
        campaign_note "  reproduce: $ROOT/Tests/Fuzz/fuzz.sh --reproduce $artifact"
    fi
}

run_campaign() {
    [ "$SECONDS_GIVEN" -eq 1 ] || SECONDS_TO_RUN=10800
    mkdir -p "$CAMPAIGN_DIR/corpus" "$CAMPAIGN_DIR/findings" "$CAMPAIGN_DIR/logs"
    [ -f "$CAMPAIGN_DIR/coverage.tsv" ] ||
        printf 'time\tseconds\tinputs\tedges\tfeatures\tcorpus\n' >"$CAMPAIGN_DIR/coverage.tsv"
    local start deadline base=0 round=0 log rc sampler left runs
    start=$(date +%s)
    deadline=$((start + SECONDS_TO_RUN))
    campaign_note "campaign: ${SECONDS_TO_RUN}s in $CAMPAIGN_DIR (engine $(file_hash "$OUT/fuzz_engine" | cut -c1-12))"
    printf '%s\t%s\t\t\t\t\tcampaign start (%ss)\n' "$(date -u +%FT%TZ)" 0 "$SECONDS_TO_RUN" \
        >>"$CAMPAIGN_DIR/coverage.tsv"
    run_regressions || return 1
    # A new differential seed per campaign: the test command's run keeps seed 1, campaigns try others.
    run_differential "$start" 2000 || return 1
    minimize_corpus
    while left=$((deadline - $(date +%s))) && [ "$left" -gt 30 ]; do
        round=$((round + 1))
        log=$CAMPAIGN_DIR/logs/run-$(date -u +%Y%m%dT%H%M%S).log
        campaign_note "run $round: ${left}s left," \
            "corpus $(find "$CAMPAIGN_DIR/corpus" -type f | wc -l) inputs, log $log"
        sample_coverage "$log" "$start" "$base" &
        sampler=$!
        set +e
        "${RUN_ENV[@]}" "$OUT/fuzz_engine" -max_total_time="$left" -max_len=65536 -timeout="$CAMPAIGN_TIMEOUT" \
            -rss_limit_mb=2048 \
            -dict="$OUT/fuzz.dict" -artifact_prefix="$CAMPAIGN_DIR/findings/" -print_final_stats=1 \
            "$CAMPAIGN_DIR/corpus" >"$log" 2>&1
        rc=$?
        set -e
        kill "$sampler" 2>/dev/null || true
        wait "$sampler" 2>/dev/null || true
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        base=$((base + ${runs:-0}))
        if grep -q 'libFuzzer: run interrupted' "$log"; then
            campaign_note "interrupted"
            break
        fi
        if [ "$rc" -ne 0 ] || grep -q 'Test unit written to' "$log"; then record_finding "$log"; fi
    done
    minimize_corpus
    local last
    last=$(grep -aE '^#[0-9]+[[:space:]].* cov: ' "$log" | tail -n 1 || true)
    campaign_note "campaign done: $(($(date +%s) - start))s, $base inputs in $round runs; last status: $last"
    campaign_note "coverage over time: $CAMPAIGN_DIR/coverage.tsv; findings: $CAMPAIGN_DIR/findings.tsv"
    if [ -f "$CAMPAIGN_DIR/findings.tsv" ]; then cat "$CAMPAIGN_DIR/findings.tsv"; fi
}

# The Swift API fuzz in a loop with a new seed each round. Builds the test bundle once (swift build), then runs
# it directly (not through `swift test`, which would hold SwiftPM's lock on .build for the whole campaign).
run_api_campaign() {
    [ "$SECONDS_GIVEN" -eq 1 ] || SECONDS_TO_RUN=3600
    mkdir -p "$CAMPAIGN_DIR/logs"
    [ -f "$CAMPAIGN_DIR/api.tsv" ] || printf 'time\tseed\tstatus\tseconds\tsummary\n' >"$CAMPAIGN_DIR/api.tsv"
    (cd "$ROOT" && swift build --build-tests >"$CAMPAIGN_DIR/logs/api-build.log" 2>&1) ||
        { tail -n 30 "$CAMPAIGN_DIR/logs/api-build.log"; echo "fuzz.sh: swift build --build-tests failed"; return 1; }
    local bundle
    bundle=$(cd "$ROOT" && swift build --show-bin-path)/SQLCipherKitPackageTests.xctest
    [ -x "$bundle" ] || { echo "fuzz.sh: no test bundle at $bundle"; return 1; }
    local start deadline seed rc log took line rounds=0 failures=0
    start=$(date +%s)
    deadline=$((start + SECONDS_TO_RUN))
    campaign_note "api campaign: ${SECONDS_TO_RUN}s of APIFuzzTests with a new seed each round"
    while [ "$(date +%s)" -lt "$deadline" ]; do
        # 7 random bytes: below 2^56, so bash's signed arithmetic keeps it positive (8 bytes came out negative,
        # which RELIABILITY_SEED does not parse: the test then drew a seed of its own).
        seed=$(( $(od -An -N7 -tu8 /dev/urandom | tr -d ' ') + 1 ))
        log=$CAMPAIGN_DIR/logs/api-$seed.log
        took=$(date +%s)
        set +e
        (cd "$ROOT" && RELIABILITY_SEED=$seed "$bundle" --testing-library swift-testing --filter 'APIFuzzTests/fuzz' \
            >"$log" 2>&1)
        rc=$?
        set -e
        took=$(($(date +%s) - took))
        rounds=$((rounds + 1))
        line=$(grep -m 1 'RELIABILITY api fuzz:' "$log" | sed 's/.*RELIABILITY api fuzz: //' || true)
        if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
            printf '%s\t%s\tok\t%s\t%s\n' "$(date -u +%FT%TZ)" "$seed" "$took" "$line" >>"$CAMPAIGN_DIR/api.tsv"
            rm -f "$log"
        else
            failures=$((failures + 1))
            printf '%s\t%s\tFAILED\t%s\t%s\n' "$(date -u +%FT%TZ)" "$seed" "$took" "see $log" >>"$CAMPAIGN_DIR/api.tsv"
            printf '%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "api seed $seed (log $log)" \
                "APIFuzzTests failed (exit $rc)" \
                "RELIABILITY_SEED=$seed swift test --filter 'APIFuzzTests/fuzz'" >>"$CAMPAIGN_DIR/findings.tsv"
            campaign_note "API FUZZ FAILED: seed $seed (exit $rc): log $log"
            campaign_note "  reproduce: RELIABILITY_SEED=$seed swift test --filter 'APIFuzzTests/fuzz'"
        fi
    done
    campaign_note "api campaign done: $rounds rounds in $(($(date +%s) - start))s, $failures failed"
    [ "$failures" -eq 0 ]
}
