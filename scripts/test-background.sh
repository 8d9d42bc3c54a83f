#!/bin/bash
# make test's work beside the tests, on the CPU time they leave (scripts/low-weight.sh): the
# Examples package's build, the packages' release build (what the packaging tests install and pack;
# after `make demo`, which builds chime the same way, the app, chime-eds and the manual are left)
# and then the documentation. make test starts it before the build of the tests, which leaves a fifth of
# two cores unused (its links, its planning); scripts/test.sh waits for each step when it needs it.
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
    # Two chains, sharing what CPU the tests leave: the release build, then the documentation (what
    # the packaging tests need), and the Examples package's build (what the examples need). (One after
    # the other, the release build was done only after the app's tests, a minute and a half before
    # the end.)
    (
        make --no-print-directory dist PIE=1 RELEASE_SCRATCH="$packaging" >"$packaging/build.log" 2>&1
        echo $? >"$dir/release.rc"
        # The documentation builds in .build: not before scripts/test.sh has asked SwiftPM for the
        # tests' folder (which waits while another SwiftPM holds .build).
        while [ ! -e "$dir/tests-started" ]; do sleep 1; done
        make --no-print-directory docs >"$dir/docs.log" 2>&1
        echo $? >"$dir/docs.rc"
    ) &
    scripts/test-examples.sh --build-only >"$dir/examples-build.log" 2>&1
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
    setsid scripts/low-weight.sh bash -c steps </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/pid"
    ;;
stop) stop ;;
*) echo "usage: scripts/test-background.sh start|stop" >&2; exit 2 ;;
esac
