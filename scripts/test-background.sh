#!/bin/bash
# make test's work beside the tests: the packages' release build (what the packaging tests install
# and pack; after `make demo`, which builds chime the same way, the app, chime-eds and the manual are
# left) at normal weight, and on the CPU time the tests leave (scripts/low-weight.sh) the Examples
# package's build and, after the release build, the documentation. make test starts it before the
# build of the tests; scripts/test.sh waits for each step when it needs it.
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
    # (Done when both chains' last statuses are written: its process may be another's by now.)
    [ -s "$dir/pid" ] && ! { [ -s "$dir/docs.rc" ] && [ -s "$dir/examples-build.rc" ]; } || return 0
    local pid
    pid=$(cat "$dir/pid")
    kill -- "-$pid" 2>/dev/null
    kill "$pid" 2>/dev/null
    rm -f "$dir/pid"
}

steps() {
    # Two chains. The release build at normal weight, beside the build of the tests: the packaging
    # tests need it, and they are the longest of what runs beside the app's tests (at the lowest
    # weight, with the Examples package's build beside it, it was done only 45 s after the calendar
    # suites and the app's tests, and the packaging tests then ran a minute past the sound suites).
    # Then the documentation, and the Examples package's build beside it all, on the time the tests
    # leave.
    (
        make --no-print-directory dist PIE=1 RELEASE_SCRATCH="$packaging" >"$packaging/build.log" 2>&1
        echo $? >"$dir/release.rc"
        # The documentation builds in .build: not before scripts/test.sh has asked SwiftPM for the
        # tests' folder (which waits while another SwiftPM holds .build).
        while [ ! -e "$dir/tests-started" ]; do sleep 1; done
        scripts/low-weight.sh make --no-print-directory docs >"$dir/docs.log" 2>&1
        echo $? >"$dir/docs.rc"
    ) &
    scripts/low-weight.sh scripts/test-examples.sh --build-only >"$dir/examples-build.log" 2>&1
    echo $? >"$dir/examples-build.rc"
    wait
}

case ${1:-} in
start)
    stop
    rm -rf "$dir" && mkdir -p "$dir" "$packaging"
    rm -f .build/examples-build.log
    export -f steps
    # (A session of its own, so that stop ends every process of it, compilers included.)
    setsid bash -c steps </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/pid"
    ;;
stop) stop ;;
*) echo "usage: scripts/test-background.sh start|stop" >&2; exit 2 ;;
esac
