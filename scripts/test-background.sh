#!/bin/bash
# make test's work beside the tests, on the CPU time they leave (scripts/low-weight.sh), one step
# after the other: the packages' release build (what the packaging tests install and pack; after
# `make demo`, which builds chime the same way, the app, chime-eds and the manual are left), the
# Examples package's build, then the documentation. make test starts it before the build of the
# tests, which leaves a fifth of two cores unused (its links, its planning); scripts/test.sh waits
# for each step when it needs it.
#
#     scripts/test-background.sh start   # (again: the earlier run stopped first)
#     scripts/test-background.sh stop
#
# Each step's status goes to .build/test-background/STEP.rc as it ends (examples-build, release,
# docs), its output to STEP.log (the release build's to $PACKAGING_SCRATCH/build.log).
set -u
cd "$(dirname "$0")/.."
export dir=.build/test-background packaging=${PACKAGING_SCRATCH:-.build-packaging}

stop() {
    # (Done when its last status is written: its process may be another's by now.)
    [ -s "$dir/pid" ] && [ ! -s "$dir/docs.rc" ] || return 0
    local pid
    pid=$(cat "$dir/pid")
    kill -- "-$pid" 2>/dev/null
    kill "$pid" 2>/dev/null
    rm -f "$dir/pid"
}

steps() {
    # One after the other, the longest of what waits on each first: the packaging tests (a minute)
    # wait on the release build, the examples (20 s) on the Examples package's build, and nothing but
    # the end of the run on the documentation. (Built side by side, the release build was done 45 s
    # after the calendar suites, and the packaging tests ran a minute past the sound suites. At normal
    # weight beside the build of the tests, it made that build 40 s longer.)
    make --no-print-directory dist PIE=1 RELEASE_SCRATCH="$packaging" >"$packaging/build.log" 2>&1
    echo $? >"$dir/release.rc"
    # The Examples package and the documentation build in .build: not before the build of the tests
    # there is over and scripts/test.sh has asked SwiftPM for the tests' folder (one SwiftPM at a
    # time holds a build folder). The Examples package then compiles only its programs: chime's
    # modules are the tests' build's (scripts/test-examples.sh).
    while [ ! -e "$dir/tests-started" ]; do sleep 1; done
    scripts/test-examples.sh --build-only >"$dir/examples-build.log" 2>&1
    echo $? >"$dir/examples-build.rc"
    make --no-print-directory docs >"$dir/docs.log" 2>&1
    echo $? >"$dir/docs.rc"
}

case ${1:-} in
start)
    stop
    rm -rf "$dir" && mkdir -p "$dir" "$packaging"
    rm -f .build/examples-build.log
    export -f steps
    # (A session of its own, so that stop ends every process of it, compilers included.)
    setsid scripts/low-weight.sh bash -c steps </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/pid"
    ;;
stop) stop ;;
*) echo "usage: scripts/test-background.sh start|stop" >&2; exit 2 ;;
esac
