#!/usr/bin/env bash
# The test command's docs part: the links of every Markdown document and DocC article in the repository
# (check-links.py: its planted controls first, then one "ok:" or "FAIL:" line per relative link, #anchor, <doc:>
# reference and symbol link) and the SQLCipherKit DocC catalogue converted with no warning (check-docc.sh: its
# planted control, then one line). Both run; the exit status is 1 when either failed. The FluentSQLCipherDriver
# catalogue is converted by the driver part (check-docc.sh --driver), which builds that package.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python3 ./check-links.py
links=$?
./check-docc.sh
docc=$?
[ "$links" = 0 ] && [ "$docc" = 0 ]
