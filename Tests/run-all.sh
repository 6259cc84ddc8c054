#!/usr/bin/env bash
# The test command (README, .ci/run): builds the artifact, or finds it up to date, with the tools the
# downstream tests link with, then runs every test: Swift Testing suites for the API and, spawning processes,
# for the build pipeline (downstream consumers, refusals, source checks, reproducibility).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./build-sqlcipher.sh --test-tools
swift test
