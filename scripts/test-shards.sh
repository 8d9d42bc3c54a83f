#!/bin/bash
# make test's stages of Swift Testing suites: those SELECT names (skip:REGEX, every suite but those
# the regular expression of suite names matches; only:REGEX, those it matches) in TEST_SHARDS test
# processes at once (3 unless said), each given a share of the suites, after the one build `make
# test` made. Logs go to .build/shards-NAME.
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
# Every test, "Module.Suite/test()", by suite; the largest suites first, each dealt to the shard with
# the fewest tests so far.
"$bundle" --testing-library swift-testing --list-tests >"$out/list" 2>"$out/list.err" || { cat "$out/list.err"; echo "cannot list the tests"; exit 1; }
grep '/' "$out/list" | sed 's|/.*||' | sort | uniq -c | sort -rn | while read -r count suite; do
    # (A name matches as the suite's own, or with its module: TimekeepingTests\.ZoneTests.)
    if [ -n "$skip" ] && [[ "$suite" =~ (^|\.)($skip)$ ]]; then continue; fi
    if [ -n "$only" ] && ! [[ "$suite" =~ (^|\.)($only)$ ]]; then continue; fi
    echo "$count $suite"
done >"$out/suites"
[ -s "$out/suites" ] || { echo "no suites to run"; exit 1; }
declare -a load patterns pids
for ((i = 0; i < shards; i++)); do load[i]=0; patterns[i]=""; done
while read -r count suite; do
    least=0
    for ((i = 1; i < shards; i++)); do ((load[i] < load[least])) && least=$i; done
    load[least]=$((load[least] + count))
    patterns[least]+="${patterns[least]:+|}${suite//./\\.}/"
done <"$out/suites"

started=$(date +%s)
for ((i = 0; i < shards; i++)); do
    [ -n "${patterns[i]}" ] || continue
    "$bundle" --testing-library swift-testing --filter "${patterns[i]}" >"$out/shard-$i.log" 2>&1 &
    pids[i]=$!
done
failed=0
for ((i = 0; i < shards; i++)); do
    [ -n "${pids[i]:-}" ] || continue
    wait "${pids[i]}"
    rc=$?
    echo "== shard $((i + 1)) of $shards (${load[i]} tests): exit $rc"
    cat "$out/shard-$i.log"
    [ "$rc" = 0 ] || failed=1
done
for ((i = 0; i < shards; i++)); do
    [ -n "${pids[i]:-}" ] || continue
    grep -h -E '^(✔|✘) Test run with' "$out/shard-$i.log" | sed "s/^/shard $((i + 1)): /"
done
[ "$failed" = 0 ] || { echo "the $name stage failed (its shards' logs are above and in $out)"; exit 1; }
# Every listed test ran, once: a filter that matched nothing would pass with nothing run.
expected=$(awk '{ n += $1 } END { print n }' "$out/suites")
ran=$(cat "$out"/shard-*.log | awk '/^(✔|✘) Test run with [0-9]+ tests?/ { n += $5 } END { print n + 0 }')
echo "the $name stage: $ran tests in $shards processes in $(($(date +%s) - started)) s ($expected listed)"
[ "$ran" = "$expected" ] || { echo "the $name stage ran $ran tests, not the $expected listed"; exit 1; }
