#!/usr/bin/env bash
# The test command's docs part: the documents' links (check-links.py: one "ok:" or "FAIL:" line per relative link
# and #anchor) and the SQLCipherKit DocC catalogue converted with no warning (check-docc.sh: one line). Both run;
# the exit status is 1 when either failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python3 ./check-links.py
links=$?
./check-docc.sh
docc=$?
[ "$links" = 0 ] && [ "$docc" = 0 ]
