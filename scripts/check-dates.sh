#!/bin/bash
# The suites that need no real loop (make check's) and the simulator, on the awkward days: the clock
# moved years ahead by libfaketime (Debian's faketime) for the suites, each day in the zone where it
# is awkward, and the simulator's histories drawn around the same days (its clock is its own: run
# under faketime as well, so that anything of it that read the machine's clock would differ).
#
#     scripts/check-dates.sh BIN_DIR
#
# BIN_DIR holds the build of the tests (chimePackageTests.xctest, chime-simulate); CHECK_SUITES
# (space-separated, from the Makefile) names the suites; DATE_SEEDS the simulator's seeds a day (50).
# The days: an ordinary one a year on; a leap day; the hour Sydney's clocks go back (02:00-03:00
# there, twice, on 2027-04-04: summer time ends in the south in April); the last day before 2038;
# and a day past 2038-01-19 03:14:07 UTC, where a signed 32-bit time_t ends.
set -u
cd "$(dirname "$0")/.."
bin=${1:?the build of the tests (its folder)}
bundle=$bin/chimePackageTests.xctest
simulate=$bin/chime-simulate
[ -x "$bundle" ] && [ -x "$simulate" ] || { echo "check-dates: build the tests first (swift build --build-tests)"; exit 1; }
command -v faketime >/dev/null || { echo "check-dates: faketime is not installed (apt-get install faketime)"; exit 1; }
suites=$(echo ${CHECK_SUITES:?the suites make check runs (from the Makefile)} | tr ' ' '|')
days=(
    "2027-06-15 12:00:00|UTC"
    "2028-02-29 12:00:00|UTC"
    "2027-04-04 02:30:00|Australia/Sydney"
    "2037-12-31 23:30:00|UTC"
    "2038-01-20 06:00:00|UTC"
)
# Left out on the moved days: EventSourceTests (below), and the suites that read chime's sources and
# ask the compiler about them, never a clock (AppleDeclarationsTests, AppleInheritanceTests,
# PartsTests: a fifth of the suites' time), which make check runs on the real day.
skip='EventSourceTests|AppleDeclarationsTests|AppleInheritanceTests|PartsTests'
logs=.build/check-dates
rm -rf "$logs" && mkdir -p "$logs"
failed=()
for entry in "${days[@]}"; do
    day=${entry%|*} zone=${entry#*|}
    name=$(echo "$day $zone" | tr ' /:' '_..')
    # The monotonic clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC): the tests' waits and bounds
    # are measured on it, and only the wall clock is the day's.
    # (But EventSourceTests: the kernel's timers keep the machine's clock, and libfaketime 0.9.10
    # moves an absolute timerfd time by the day's offset, so a timer armed for the epoch, which fires
    # at once, becomes a negative time the kernel refuses. They are the real loop's, tested on the
    # real clock by make check and make test.)
    if ! TZ=$zone FAKETIME_DONT_FAKE_MONOTONIC=1 NO_COLOR=1 faketime "$day" \
        "$bundle" --testing-library swift-testing --filter "$suites" --skip "$skip" >"$logs/$name.suites.log" 2>&1; then
        failed+=("suites on $day $zone")
        # What failed, with the lines that say why (the end of the log is the suites that passed).
        grep -E -A6 "recorded an issue|✘ Test [^r]" "$logs/$name.suites.log" | head -n 120
        tail -n 3 "$logs/$name.suites.log"
    elif ! grep -qE "Test run with [1-9][0-9]* tests? .*passed" "$logs/$name.suites.log"; then
        failed+=("suites on $day $zone (nothing ran)")
        tail -n 20 "$logs/$name.suites.log"
    fi
    # The clock the suites saw was the day's (faketime worked): `date` under the same settings.
    seen=$(TZ=$zone FAKETIME_DONT_FAKE_MONOTONIC=1 faketime "$day" date +%F)
    [ "$seen" = "${day%% *}" ] || failed+=("faketime did not move the clock to $day $zone (date said $seen)")
    if ! TZ=$zone FAKETIME_DONT_FAKE_MONOTONIC=1 faketime "$day" \
        "$simulate" --around "${day%% *}" --seeds "${DATE_SEEDS:-50}" --days 7 >"$logs/$name.simulate.log" 2>&1; then
        failed+=("the simulator around $day")
        tail -n 60 "$logs/$name.simulate.log"
    fi
    passed=$(grep -oE "Test run with [0-9]+ tests?" "$logs/$name.suites.log" | grep -oE "[0-9]+" | head -1)
    echo "check-dates: $day $zone: ${passed:-no} tests; the simulator: $(tail -n 1 "$logs/$name.simulate.log")"
done
[ ${#failed[@]} = 0 ] || { printf 'check-dates: failed: %s\n' "${failed[@]}"; exit 1; }
echo "check-dates: every day passed"
