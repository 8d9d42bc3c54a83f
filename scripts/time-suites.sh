#!/bin/bash
# Times each Swift Testing suite alone (one test process per suite, one suite at a time, nothing
# else running) and writes Tests/suite-seconds: "SECONDS Module.Suite", the longest first. make
# test's stages (scripts/test-shards.sh) start the longest suites first; a suite not in the file
# counts a second a test. Run it after the tests are built when suites were added or changed much:
#
#     swift build --build-tests -Xcxx -DNDEBUG && scripts/time-suites.sh -Xcxx -DNDEBUG
set -u
cd "$(dirname "$0")/.."
bin=$(swift build "$@" --show-bin-path) || exit 1
bundle=$bin/chimePackageTests.xctest
[ -x "$bundle" ] || { echo "no test bundle at $bundle: build the tests first (swift build --build-tests)"; exit 1; }
export NO_COLOR=1
list=$(mktemp)
trap 'rm -f "$list"' EXIT
"$bundle" --testing-library swift-testing --list-tests 2>/dev/null | grep '/' | sed 's|/.*||' | sort -u >"$list"
while read -r suite; do
    started=$(date +%s%N)
    "$bundle" --testing-library swift-testing --filter "^${suite//./\\.}/" >/dev/null 2>&1 || echo "time-suites.sh: $suite failed" >&2
    echo "$(( ($(date +%s%N) - started) / 100000000 )) $suite"
done <"$list" | sort -rn | awk '{ printf "%d.%d %s\n", $1 / 10, $1 % 10, $2 }' >Tests/suite-seconds.new
mv Tests/suite-seconds.new Tests/suite-seconds
echo "Tests/suite-seconds: $(wc -l <Tests/suite-seconds) suites, $(awk '{ s += $1 } END { print s }' Tests/suite-seconds) s in all"
