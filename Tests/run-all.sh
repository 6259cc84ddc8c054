#!/usr/bin/env bash
# The test command (README, .ci/run): builds the artifact, or finds it up to date, with the tools the
# downstream tests link with; runs every Swift Testing suite (the API, the reliability suite with its child
# processes, the CLI, the build pipeline, interoperability with an independent SQLCipher build); then runs
# SQLCipher's own test/sqlcipher.test against a harness built with the engine's flags; then fuzzes the engine
# for 60 seconds under ASan and UBSan.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./build-sqlcipher.sh --test-tools
# Two runs: the build-pipeline tests spend minutes waiting on child builds (consumer packages, a second
# checkout), and on 2 cores they would hold the threads the other suites need; apart, neither starves.
swift test --skip BuildPipelineTests
swift test --skip-build --filter BuildPipelineTests
Tests/Upstream/run-upstream.sh
# The same suite on SQLCipher's reference crypto provider (build-sqlcipher.sh --crypto-provider reference; its
# harness is kept apart, in Vendor/build/upstream-reference/).
UPSTREAM_CRYPTO_PROVIDER=reference Tests/Upstream/run-upstream.sh
Tests/Fuzz/fuzz.sh 60
