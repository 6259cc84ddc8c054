#!/usr/bin/env bash
# The test command's docs part: the links of every Markdown document and DocC article in the repository
# (check-links.py: its planted controls first, then one "ok:" or "FAIL:" line per relative link, #anchor, <doc:>
# reference and symbol link) and the SQLCipherKit DocC catalogue converted with no warning (check-docc.sh: its
# planted control, then one line), and the code examples (check-examples.py, issue 48: every dependency line on
# SQLCipherKit's packages names the built version, in the repository's documents and dist's generated READMEs; the
# Swift examples of the README and the SQLCipherKit catalogue compiled against dist/ as the swiftc route does;
# its controls first: a misspelled method and a wrong version must fail). All three run; the exit status is 1 when
# any failed. The FluentSQLCipherDriver catalogue is converted by the driver part (check-docc.sh --driver), which
# builds that package.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python3 ./check-links.py
links=$?
./check-docc.sh
docc=$?
python3 ./check-examples.py
examples=$?
[ "$links" = 0 ] && [ "$docc" = 0 ] && [ "$examples" = 0 ]
