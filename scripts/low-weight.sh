#!/bin/bash
# Runs a command on the CPU time the rest of the machine leaves: make test's packaging build runs
# so beside the tests, which then lose next to nothing to it, while it takes every cycle they spend
# waiting (on daemons, buses, the clock).
#
#     scripts/low-weight.sh COMMAND [ARGUMENTS...]
#
# nice alone does not do it: SwiftPM starts its compilers at priority 0 whatever it was started
# with (and out of SCHED_IDLE), so the command runs in a control group of its own with the lowest
# CPU weight (cgroup v2's cpu.weight 1, or v1's cpu.shares 2), which no child can leave. Where no
# control group can be made (no cpu controller, a read-only /sys/fs/cgroup), it runs under nice
# and says so. The group goes when the command ends; the command's exit status is this script's.
#
#     scripts/low-weight.sh --raise PID...   # those runs' groups to the normal weight
#     scripts/low-weight.sh --lower PID...   # and back to the lowest
#
# (PID: the run's own, as `$!` gave it to whoever started it under setsid.) The lowest weight yields
# to the tests beside it, and to every other job on the machine too: make test raises what it waits
# for (the release build, before its main stage), and at its end what is left, so that a busy
# machine (two CPU-bound jobs beside it) slows the run but never starves it. Where the run got no
# group (nice alone), nothing changes.
set -u
if [ "${1:-}" = --raise ] || [ "${1:-}" = --lower ]; then
    [ "$1" = --raise ] && v2=100 v1=1024 || v2=1 v1=2
    shift
    for pid in "$@"; do
        for g in /sys/fs/cgroup/chime-low-weight-$pid /sys/fs/cgroup/cpu/chime-low-weight-$pid; do
            [ -f "$g/cpu.weight" ] && echo $v2 >"$g/cpu.weight" 2>/dev/null
            [ -f "$g/cpu.shares" ] && echo $v1 >"$g/cpu.shares" 2>/dev/null
        done
    done
    exit 0
fi
group=""
back=""
# A group of an earlier run whose processes are gone (an interrupted make test).
sweep() { for old in "$1"/chime-low-weight-*; do [ -d "$old" ] && rmdir "$old" 2>/dev/null; done; }
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    # cgroup v2: a child of the root, with the cpu controller on for the root's children.
    sweep /sys/fs/cgroup
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    candidate=/sys/fs/cgroup/chime-low-weight-$$
    if mkdir "$candidate" 2>/dev/null; then
        if echo 1 >"$candidate/cpu.weight" 2>/dev/null; then group=$candidate; back=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
        else rmdir "$candidate"; fi
    fi
elif [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
    # cgroup v1's cpu hierarchy.
    sweep /sys/fs/cgroup/cpu
    candidate=/sys/fs/cgroup/cpu/chime-low-weight-$$
    if mkdir "$candidate" 2>/dev/null; then
        if echo 2 >"$candidate/cpu.shares" 2>/dev/null; then
            group=$candidate; back=/sys/fs/cgroup/cpu$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup | head -1)
        else rmdir "$candidate"; fi
    fi
fi
if [ -n "$group" ] && echo $BASHPID >"$group/cgroup.procs" 2>/dev/null; then
    nice -n 19 "$@"
    status=$?
    # Out of the group (back where this script was), and the group removed.
    echo $BASHPID >"$back/cgroup.procs" 2>/dev/null || echo $BASHPID >"${group%/*}/cgroup.procs" 2>/dev/null
    rmdir "$group" 2>/dev/null
    exit $status
fi
[ -n "$group" ] && rmdir "$group" 2>/dev/null
echo "low-weight.sh: no control group could be made here; running under nice alone (its compilers at normal priority): $*" >&2
exec nice -n 19 "$@"
