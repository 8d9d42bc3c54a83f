#!/bin/bash
# make test, after its one build of the tests (swift build --build-tests): every stage, arranged so
# that a two-core machine is kept busy and nothing timed waits on a build.
#
#     scripts/test.sh [swift build flags...]
#
# The stages, and why in this order:
#  - In the background, on the CPU time the tests leave (scripts/test-background.sh, which make test
#    starts before its build of the tests), one after the other: the packages' release build (what
#    the packaging tests install and pack), the Examples package's build, the documentation.
#  - The daemon under the simulator: the kept histories and CHECK_SEEDS seeds of a week.
#  - Then every stage runs the release build (CHIME_BINARY), which the background's first step
#    makes (after make demo only the app and chime-eds are left of it): what the packages hold,
#    and 2-3 times faster than a debug build where a test's daemon or CLI works hard.
#  - The main stage: every Swift Testing suite but those below, in MAIN_SHARDS processes (6), each
#    taking the longest suite left (scripts/test-shards.sh); it keeps two cores busy by itself.
#  - At once: the calendar suites (in CALENDAR_SHARDS processes: they mostly wait on a CalDAV server,
#    EDS, vdirsyncer) and the desktop app's tests (APP_TEST_JOBS at once; 3 made the stage slower,
#    225 s against 192 s, when the app's tests were what the stage waited on). When the calendar
#    suites end, the examples and the packaging tests start at the lowest weight. (Started with the
#    stage, beside the Examples package's build and the documentation's, they made it slower: 123 s
#    against 97 s.)
#  - From the calendar suites' start to the end, at the lowest weight: make check's suites and the
#    simulator with the clock moved to the awkward days (scripts/check-dates.sh).
#  - The sound suites alone among the tests at normal weight (they measure real-time audio to the
#    millisecond), in three processes; beside them, at the lowest weight, what is left of the
#    Examples package's programs against the daemon and dunst (CorpusTests among them) and of the
#    packaging tests (once the release build is done).
# Every test bundle is run directly (TEST_BUNDLE): `swift test` would wait on the build folder's
# lock, which the documentation's build holds for a while. Each stage's output is printed whole when
# it ends; the first failing stage ends the run (after the stages running with it), with its log.
# The suites of each stage: SOUND_SUITES, CALENDAR_SUITES and EXAMPLE_SUITES (space-separated names,
# from the Makefile).
set -u
cd "$(dirname "$0")/.."
flags=("$@")
bin=$(swift build "${flags[@]}" --show-bin-path) || exit 1
export TEST_BUNDLE=$bin/chimePackageTests.xctest
[ -x "$TEST_BUNDLE" ] || { echo "no test bundle at $TEST_BUNDLE: build the tests first (swift build --build-tests)"; exit 1; }
started=$(date +%s)
stage() { echo "== make test, $(($(date +%s) - started)) s in: $*"; }
regex() { local words=($1); local IFS='|'; echo "${words[*]}"; }
sound=$(regex "${SOUND_SUITES:-AlarmSoundTests PlaybackTests}")
calendar=$(regex "${CALENDAR_SUITES:?the calendar suites (from the Makefile)}")
examples=$(regex "${EXAMPLE_SUITES:-CorpusTests}")
packaging=${PACKAGING_SCRATCH:-.build-packaging}
logs=.build/test-stages
background=.build/test-background
rm -rf "$logs" && mkdir -p "$logs"

# Waits for the file $1 (written when a background step ends) and says whether its status was 0.
await_status() { while [ ! -s "$1" ]; do sleep 1; done; [ "$(cat "$1")" = 0 ]; }

# The background (scripts/test-background.sh): make test started it before its build; started here
# when this script is run by itself.
[ "${TEST_BACKGROUND:-}" = started ] || scripts/test-background.sh start
trap 'scripts/test-background.sh stop' EXIT
touch "$background/tests-started"
export logs packaging background bin CHECK_SUITES

stage "the simulator"
"$bin/chime-simulate" --replay Tests/simulation/*.steps >"$logs/simulate.log" 2>&1 || { cat "$logs/simulate.log"; exit 1; }
"$bin/chime-simulate" --seeds "${CHECK_SEEDS:-200}" --days 7 || exit 1

# Every stage from here runs the release build (what the packages hold: CHIME_BINARY, with
# chime-commands, chime-eds and chime-alarms beside it; a debug daemon only where a test sets one of
# its CHIME_TEST_ switches). Against debug daemons the main stage took 238 s, against these 126 s.
stage "waiting for the release build"
# (At the normal weight while the tests wait for it: the lowest would leave it nothing on a machine
# busy with other jobs. Back to the lowest once it is done, for what the background does next.)
background_pid=$(cat "$background/pid" 2>/dev/null)
[ -s "$background/release.rc" ] || scripts/low-weight.sh --raise $background_pid
await_status "$background/release.rc"
release_rc=$?
scripts/low-weight.sh --lower $background_pid
[ $release_rc = 0 ] || { cat "$packaging/build.log"; echo "make test: the release build failed (its log is above)"; exit 1; }
scripts/check-warnings.sh "$packaging/build.log" || exit 1
CHIME_BINARY=$(realpath "$packaging/release/chime")
export CHIME_BINARY
release_bin=$(dirname "$CHIME_BINARY")

stage "the main stage"
# (Alone: it keeps both cores busy by itself. Run beside the calendar suites and the app's tests it
# took as long as the two stages one after the other, and the machine, saturated, slowed some tests
# past their bounds. Six processes, each taking the longest suite left: many suites hold their tests
# to one at a time, and with three processes the stage took 146 s to six's 104 s.)
failed=()
TEST_SHARDS=${MAIN_SHARDS:-6} scripts/test-shards.sh main "skip:$sound|$calendar|$examples" "${flags[@]}" >"$logs/main.log" 2>&1 || failed+=(main)
cat "$logs/main.log"
[ ${#failed[@]} = 0 ] || { echo "make test: the main stage failed (its log is above and in $logs)"; exit 1; }

# The examples (once the Examples package is built) and the packaging tests (once the release build
# is done: they need nothing of the documentation, which builds after it), side by side on the CPU
# time the tests leave (at the lowest weight): they wait on daemons and dunst with bounds for a busy
# machine, and the tests beside them are not slowed by them.
tail_stages() {
    (
        if await_status "$background/release.rc"; then
            RELEASE_SCRATCH=$packaging scripts/test-packaging.sh >"$logs/packaging.log" 2>&1
            echo $? >"$logs/packaging.rc"
        else
            echo 1 >"$logs/packaging.rc"
        fi
    ) &
    await_status "$background/examples-build.rc" || cat "$background/examples-build.log"
    scripts/test-examples.sh >"$logs/examples.log" 2>&1
    echo $? >"$logs/examples.rc"
    wait
}
export -f tail_stages await_status

stage "the calendar suites and the app's tests, at once; the examples and the packaging tests once the calendar suites end"
# make check's suites and the simulator on the awkward days (the clock moved by libfaketime), from
# here to the end at the lowest weight: CPU-bound, on the time the calendar suites, the app's tests
# and the sound suites leave (they mostly wait on servers, windows and real-time audio). (Run after
# the examples, they were the last two minutes of the run.)
setsid scripts/low-weight.sh bash -c 'scripts/check-dates.sh "$bin" >"$logs/dates.log" 2>&1; echo $? >"$logs/dates.rc"' &
dates_pid=$!
trap 'scripts/test-background.sh stop; kill -- "-$dates_pid" 2>/dev/null' EXIT
TEST_SHARDS=${CALENDAR_SHARDS:-3} scripts/test-shards.sh calendar "only:$calendar" "${flags[@]}" >"$logs/calendar.log" 2>&1 &
calendar_pid=$!
/usr/bin/python3 Tests/app/test_app.py "$CHIME_BINARY" "$release_bin/chime-alarms" >"$logs/app.log" 2>&1 &
app=$!
wait $calendar_pid || failed+=(calendar)
cat "$logs/calendar.log"
setsid scripts/low-weight.sh bash -c tail_stages &
tail_pid=$!
trap 'scripts/test-background.sh stop; kill -- "-$tail_pid" "-$dates_pid" 2>/dev/null' EXIT
wait $app || failed+=(app)
cat "$logs/app.log"
[ ${#failed[@]} = 0 ] || { echo "make test: these stages failed: ${failed[*]} (their logs are above and in $logs)"; exit 1; }

stage "the sound suites, the examples and the packaging tests beside them at the lowest weight"
# The sound suites in processes of their own, all at once: each holds its tests to one at a time (a
# test's own PulseAudio, measured to the millisecond; PlaybackTests' player reads PULSE_SERVER from
# its process), and they mostly wait on real-time audio. A suite of SOUND_SPLIT is dealt out to two
# processes (AlarmSoundTests: 70 s in one).
# The sound tests, listed once ("Module.Suite/test(…)").
"$TEST_BUNDLE" --testing-library swift-testing --list-tests 2>/dev/null | grep -E "^[A-Za-z]*\.($sound)/" >"$logs/sound-tests"
sound_names=() sound_filters=()
for suite in ${SOUND_SUITES:-AlarmSoundTests PlaybackTests}; do
    if [[ " ${SOUND_SPLIT:-AlarmSoundTests} " == *" $suite "* ]]; then
        tests=($(grep -E "^[A-Za-z]*\.$suite/" "$logs/sound-tests" | sed 's|.*/||; s|(.*||'))
        for half in 0 1; do
            names=()
            for ((i = half; i < ${#tests[@]}; i += 2)); do names+=("${tests[i]}"); done
            sound_names+=("$suite-$half")
            sound_filters+=("^[A-Za-z]*\.$suite/($(IFS='|'; echo "${names[*]}"))\(")
        done
    else
        sound_names+=("$suite")
        sound_filters+=("^[A-Za-z]*\.$suite/")
    fi
done
sound_pids=()
for i in "${!sound_names[@]}"; do
    "$TEST_BUNDLE" --testing-library swift-testing --filter "${sound_filters[i]}" >"$logs/sound-${sound_names[i]}.log" 2>&1 &
    sound_pids[i]=$!
done
sound_failed=()
for i in "${!sound_names[@]}"; do
    wait "${sound_pids[i]}"
    rc=$?
    log=$logs/sound-${sound_names[i]}.log
    cat "$log"
    [ $rc = 0 ] && grep -qE "Test run with [1-9][0-9]* tests? .*passed" "$log" || sound_failed+=("${sound_names[i]}")
done
[ ${#sound_failed[@]} = 0 ] || { echo "make test: these sound suites failed or ran nothing: ${sound_failed[*]}"; exit 1; }
# Every sound test ran: the halves' filters are made of names.
sound_expected=$(wc -l <"$logs/sound-tests")
sound_ran=$(cat "$logs"/sound-*.log | awk '/^(✔|✘) Test run with [0-9]+ tests?/ { n += $5 } END { print n + 0 }')
[ "$sound_ran" = "$sound_expected" ] || { echo "make test: the sound suites ran $sound_ran tests, not the $sound_expected listed"; exit 1; }

stage "the examples, the packaging tests and the awkward days (what is left of them)"
# Nothing of the tests runs at the normal weight now: what is left runs at it, so that other jobs
# on the machine slow it but cannot starve it.
scripts/low-weight.sh --raise $background_pid $tail_pid $dates_pid
wait $tail_pid
await_status "$logs/examples.rc"
rc=$?
cat "$logs/examples.log"
[ $rc = 0 ] || { echo "make test: the examples failed"; exit 1; }
if ! await_status "$background/release.rc"; then cat "$packaging/build.log"; echo "make test: the packages' release build failed"; exit 1; fi
if ! await_status "$background/docs.rc"; then cat "$background/docs.log"; echo "make test: the documentation did not build"; exit 1; fi
await_status "$logs/packaging.rc"
rc=$?
cat "$logs/packaging.log"
[ $rc = 0 ] || { echo "make test: the packaging tests failed"; exit 1; }
await_status "$logs/dates.rc"
rc=$?
cat "$logs/dates.log"
[ $rc = 0 ] || { echo "make test: make check's suites or the simulator failed on an awkward day"; exit 1; }
stage "everything passed"
