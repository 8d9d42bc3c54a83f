#!/bin/bash
# The Examples/ package, built as a user builds it (swift build in Examples/): its four examples run
# against chime's daemon and dunst on a private session bus (what each program prints, and what the
# daemon then holds), then every program of it, the corpus of code as people write it among them, in
# CorpusTests (against the daemon and our recording server, to read the wire). Every process it
# starts is stopped by its PID.
#
#     scripts/test-examples.sh [--build-only]
#
# --build-only builds the package and keeps its log in .build/examples-build.log (make test does it
# early, on the time the other tests leave); the run after it reads that log and builds nothing.
#
# The package is built in chime's own build folder (.build, SCRATCH), with the tests' flags: SwiftPM
# then finds chime's modules built by the build of the tests (the same commands) and compiles only
# the programs, 23 s of CPU against 119 s in a folder of its own. The package is still resolved and
# planned as a user's is (chime a dependency at a path, its UserNotifications product). While it
# builds, nothing else may use .build (SwiftPM's lock): make test builds it after its tests' build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=${SCRATCH:-$root/.build}
# (The tests' flags: the Makefile's CXX_FLAGS, which make exports.)
read -ra cxx_flags <<<"${CXX_FLAGS:--Xcxx -DNDEBUG}"
build=(swift build --package-path "$root/Examples" --scratch-path "$scratch" "${cxx_flags[@]}")
prebuilt_log=$scratch/examples-build.log
if [ "${1:-}" = --build-only ]; then
    "${build[@]}" >"$prebuilt_log" 2>&1 || { cat "$prebuilt_log"; echo "test-examples: Examples/ did not build" >&2; exit 1; }
    exit 0
fi
# (make test: the release build, CHIME_BINARY; else the debug build.)
chime=${CHIME_BINARY:-$root/.build/debug/chime}
source scripts/private-session.sh
work=$session_dir
fail() {
    echo "test-examples: $*" >&2
    echo "--- chime list:" >&2; "$chime" list >&2 || true
    echo "--- the daemon's log:" >&2; tail -n 60 "$work/daemon.log" >&2 || true
    exit 1
}

# Built by an earlier --build-only: its log is read, and nothing is built again (the documentation
# may hold the build folder's lock by now).
if [ -f "$prebuilt_log" ]; then
    mv "$prebuilt_log" "$work/build.log"
else
    "${build[@]}" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "Examples/ did not build"; }
fi
# (The folder of the programs: the build folder's debug one, where the tests' build is too.)
bin=$scratch/debug
[ -x "$bin/egg-timer" ] || fail "Examples/ built, but not into $bin"
# The programs compile without a warning of their own but one: in top-level code (a main.swift with
# `await`), Swift calls the synchronous `add` for `try await center.add(request)` and says that nothing
# there is async or throws. That call hands the request over before it returns (CorpusTests runs such
# programs, and the egg timer, and reads the daemon); any other warning is a drift of our declarations.
known="no 'async' operations occur within 'await' expression|no calls to throwing functions occur within 'try' expression"
if grep -E "/Examples/(Sources|Corpus)/[^:]+:[0-9]+:[0-9]+: warning:" "$work/build.log" | grep -vE "$known" >&2; then
    fail "the examples compile with warnings"
fi

# The one test desktop: a private bus, Xvfb and dunst (scripts/testdesktop.py).
start_private_bus
start_dunst
# The desktop has no sound server (its PULSE_SERVER names none): the examples' sounds are not
# played through the speakers of this session.
CHIME_TRACE=1 "$chime" daemon --no-config --state-dir "$work/state" >"$work/daemon.log" 2>&1 &
session_pids+=($!)
for _ in $(seq 300); do "$chime" list >/dev/null 2>&1 && break; sleep 0.1; done
# Each program is an application of its own, named after itself (no CHIME_APPLICATION_ID).
unset CHIME_APPLICATION_ID

run() { "$bin/$1" "${@:2}" 2>&1; }

out=$(run check-authorization)
echo "$out" | grep -q "^authorization: authorized, sound: .*badges: not supported$" || fail "check-authorization said: $out"
echo "$out" | grep -q "^scheduled: every hour$" || fail "check-authorization said: $out"

out=$(run egg-timer 2)
echo "$out" | grep -q "^Eggs in 2 s, at " || fail "egg-timer said: $out"
# A wait on state returns as soon as it holds: the bound (30 s) is for a machine that is busy.
for _ in $(seq 300); do "$chime" delivered | grep -q "Wait!" && break; sleep 0.1; done
"$chime" delivered | grep -q "^egg-timer/.*Wait!" || fail "the egg timer was not shown: $("$chime" delivered)"

out=$(run weekday-alarm)
[ "$(echo "$out" | grep -c "^homeroom/[2-6] ")" = 5 ] || fail "weekday-alarm said: $out"

out=$(run weekly-reminders habit)
[ "$(echo "$out" | grep -c "^habit/")" = 6 ] || fail "weekly-reminders said: $out"
echo "$out" | grep -q "^habit/Monday" && fail "weekly-reminders kept Monday: $out"

# What the daemon holds, under each program's name.
list=$("$chime" list)
[ "$(echo "$list" | grep -c "^check-authorization/stretch ")" = 1 ] || fail "chime list: $list"
[ "$(echo "$list" | grep -c "^weekday-alarm/homeroom/")" = 5 ] || fail "chime list: $list"
[ "$(echo "$list" | grep -c "^weekly-reminders/habit/")" = 6 ] || fail "chime list: $list"
echo "$list" | grep -q "^egg-timer/" && fail "the egg timer is still pending: $list"
echo "test-examples: the four examples built and ran against the daemon and dunst"

# Every program of the package (the corpus and the examples), in the test bundle's CorpusTests.
# (The test bundle run directly: `swift test` would wait on the build folder's lock.)
bundle=${TEST_BUNDLE:-$root/.build/debug/chimePackageTests.xctest}
CHIME_EXAMPLES_BIN=$bin "$bundle" --testing-library swift-testing --filter 'UserNotificationsTests\.CorpusTests/' >"$work/corpus.log" 2>&1 \
    || { grep -vE '^\[' "$work/corpus.log" | tail -n 80; fail "CorpusTests failed"; }
grep -E "Suite CorpusTests passed" "$work/corpus.log" || { tail -n 40 "$work/corpus.log"; fail "CorpusTests did not run"; }
