#!/bin/bash
# make test's stages of Swift Testing suites: those SELECT names (skip:REGEX, every suite but those
# the regular expression of suite names matches; only:REGEX, those it matches) in TEST_SHARDS test
# processes at once (3 unless said), each taking the next suite from a queue as it ends one, after
# the one build `make test` made. Logs go to .build/shards-NAME.
#
# Why: Swift Testing runs a process's tests as tasks on the Swift concurrency pool, one thread per
# core, and chime's tests are synchronous and mostly wait (on daemons, buses, notification servers,
# the clock): on a two-core machine one process runs two of them at a time and the others queue
# behind two sleeping threads. Several processes let more of them wait at once; the machine stays
# as busy as the tests make it, which is what they are written to bear. The test bundle is run
# directly: `swift test` holds a lock on the build folder, so several of them run one at a time.
#
#     scripts/test-shards.sh NAME SELECT [swift build flags...]
#
# The bundle is TEST_BUNDLE when set (so that no swift command waits on the build folder's lock
# while another holds it), else the one `swift build --show-bin-path` names.
set -u
name=$1
select=$2
shift 2
case $select in
    skip:*) skip=${select#skip:}; only="" ;;
    only:*) only=${select#only:}; skip="" ;;
    *) echo "test-shards.sh: SELECT is skip:REGEX or only:REGEX, not $select"; exit 2 ;;
esac
shards=${TEST_SHARDS:-3}
out=.build/shards-$name
rm -rf "$out" && mkdir -p "$out"
export NO_COLOR=1

bundle=${TEST_BUNDLE:-}
if [ -z "$bundle" ]; then
    bin=$(swift build "$@" --show-bin-path) || exit 1
    bundle=$(ls -d "$bin"/*PackageTests.xctest | head -1)
fi
[ -x "$bundle" ] || { echo "no test bundle at ${bundle:-$bin}: build the tests first (swift build --build-tests)"; exit 1; }
# An XCTest case would not be run here: in the stage that skips, every one must be among those
# skipped (the sound suites).
if [ -n "$skip" ]; then
    for suite in $("$bundle" --list-tests 2>/dev/null | grep '/' | sed 's|/.*||; s|.*\.||' | sort -u); do
        [[ "$suite" =~ ^($skip)$ ]] || { echo "$suite is an XCTest case: run it in a stage of its own, or make it a Swift Testing suite"; exit 1; }
    done
fi
# Every test, "Module.Suite/test()", by suite, with what the suite took alone (Tests/suite-seconds,
# scripts/time-suites.sh writes it; a suite not there counts a second a test).
"$bundle" --testing-library swift-testing --list-tests >"$out/list" 2>"$out/list.err" || { cat "$out/list.err"; echo "cannot list the tests"; exit 1; }
grep '/' "$out/list" | sed 's|/.*||' | sort | uniq -c | while read -r count suite; do
    # (A name matches as the suite's own, or with its module: TimekeepingTests\.ZoneTests.)
    if [ -n "$skip" ] && [[ "$suite" =~ (^|\.)($skip)$ ]]; then continue; fi
    if [ -n "$only" ] && ! [[ "$suite" =~ (^|\.)($only)$ ]]; then continue; fi
    seconds=$(awk -v s="$suite" '$2 == s { print $1; exit }' Tests/suite-seconds 2>/dev/null)
    echo "$count $suite ${seconds:-$count}"
done >"$out/suites"
[ -s "$out/suites" ] || { echo "no suites to run"; exit 1; }
# The queue: the longest suites first. Each process takes the next suite when it is done with one,
# so they end together whatever each suite takes (dealt out in advance by their number of tests,
# one process ran 44 s past the others).
sort -k3,3 -g -r "$out/suites" | awk '{ print $2 }' >"$out/queue"
next_suite() { flock "$out/queue.lock" bash -c 'head -1 "$0" && sed -i 1d "$0"' "$out/queue"; }
worker() {
    local i=$1 suite
    : >"$out/shard-$i.log"
    while suite=$(next_suite) && [ -n "$suite" ]; do
        echo "$suite" >>"$out/shard-$i.suites"
        "$bundle" --testing-library swift-testing --filter "^${suite//./\\.}/" >>"$out/shard-$i.log" 2>&1 || echo "$suite" >>"$out/shard-$i.failed"
    done
}

started=$(date +%s)
for ((i = 0; i < shards; i++)); do
    worker "$i" &
    pids[i]=$!
done
failed=0
for ((i = 0; i < shards; i++)); do
    wait "${pids[i]}"
    suites=$(cat "$out/shard-$i.suites" 2>/dev/null | wc -l)
    if [ -s "$out/shard-$i.failed" ]; then
        echo "== process $((i + 1)) of $shards ($suites suites): failed: $(tr '\n' ' ' <"$out/shard-$i.failed")"
        failed=1
    else
        echo "== process $((i + 1)) of $shards ($suites suites): passed"
    fi
    cat "$out/shard-$i.log"
done
[ "$failed" = 0 ] || { echo "the $name stage failed (its shards' logs are above and in $out)"; exit 1; }
# Every listed test ran, once: a filter that matched nothing would pass with nothing run.
expected=$(awk '{ n += $1 } END { print n }' "$out/suites")
ran=$(cat "$out"/shard-*.log | awk '/^(✔|✘) Test run with [0-9]+ tests?/ { n += $5 } END { print n + 0 }')
echo "the $name stage: $ran tests in $shards processes in $(($(date +%s) - started)) s ($expected listed)"
[ "$ran" = "$expected" ] || { echo "the $name stage ran $ran tests, not the $expected listed"; exit 1; }
