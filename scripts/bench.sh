#!/usr/bin/env bash
# `make bench`: chime against its peers, measured in the same run on a private bus.
#
#  1. in-process: Notify round trips (median, p99) and pipelined throughput through
#     chime's dbus layer vs the same calls from C on raw libdbus (bench/c/raw_notify.c),
#     against a server that only replies (bench/c/trivial_server.c), runs alternated;
#  2. whole process: `chime notify` vs notify-send, gdbus call and dbus-send with the
#     same message, alternated run by run in a fresh random order each round
#     (bench/c/spawn_timer.c), wall time and peak RSS,
#     against the trivial server and against dunst under Xvfb.
# Results go to bench/out/ and are summarised as ratios with the issue's targets.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
chime=$PWD/.build/release/chime
# The binary make install and make deb ship: position-independent (make bench builds it first).
shipped=$PWD/.build/shipped/chime
# The shipped chime started as notify-send (a link, as README's "chime as notify-send" makes one), to
# a copy of its own: two commands run from one file share its pages in the CPU's caches, and the
# second of them measured up to 0.19 ms faster than the first.
rm -rf "$out/links" && mkdir -p "$out/links/copy"
cp "$shipped" "$(dirname "$shipped")/chime-commands" "$out/links/copy/"
ln -sfn copy/chime "$out/links/notify-send"
as_notify_send=$out/links/notify-send
bench=$PWD/.build/release/chime-bench
SWIFT_CMD=${SWIFT:-swift}
ROUNDS=${ROUNDS:-300}
DUNST_ROUNDS=${DUNST_ROUNDS:-100}
INPROC_RUNS=${INPROC_RUNS:-7}

for tool in trivial_server raw_notify spawn_timer; do
    gcc -O2 -o "$out/$tool" "bench/c/$tool.c" $(pkg-config --cflags --libs dbus-1)
done
# The floor: a Swift hello world linked the way chime is (static runtime and libstdc++, no PIE).
swiftc -O -static-stdlib -L.build-static-libs -Xclang-linker -no-pie bench/hello/hello.swift -o "$out/swift-hello" 2>/dev/null

# The desktop app beside gnome-clocks: sessions of their own (Xvfb, bus, dunst, the daemon), before
# this script's bus and server start.
APP_RUNS=${APP_RUNS:-5}
echo "== the desktop app vs gnome-clocks: launch to first frame with 100 alarms, memory ($APP_RUNS alternated runs); 100,000 alarms opened and scrolled"
/usr/bin/python3 bench/app.py "$chime" "$PWD/.build/release/chime-alarms" "$APP_RUNS" 2>"$out/app.log" >"$out/app.json"

SOUND_ROUNDS=${SOUND_ROUNDS:-60}
echo "== an alarm's sound: due time → first sample at the sink, chime vs paplay and canberra-gtk-play ($SOUND_ROUNDS rounds); the daemon's memory"
/usr/bin/python3 bench/sound.py "$chime" "$out/trivial_server" "$SOUND_ROUNDS" 2>"$out/sound.log" >"$out/sound.json"

echo "== a followed 16 MiB calendar of 100,000 events: the first answer, a plain alarm beside it, all known, an edit, memory"
/usr/bin/python3 bench/big_calendar.py "$chime" "$out/trivial_server" 100000 2>"$out/big-calendar.log" >"$out/big-calendar.json"

EDS_EVENTS=${EDS_EVENTS:-100000}
echo "== GNOME's calendar of $EDS_EVENTS events through Evolution Data Server: all known, the loop's holds, a change in EDS → known, memory"
/usr/bin/python3 bench/eds_calendar.py "$chime" "$out/trivial_server" "$EDS_EVENTS" 2>"$out/eds-calendar.log" >"$out/eds-calendar.json"

source scripts/private-session.sh
start_private_bus
# The release builds just wrote hundreds of MB; let their writeback finish before timing anything.
sync

LATENESS_RUNS=${LATENESS_RUNS:-3}
echo "== lateness: 200 alarms 5 ms apart, due time to the server's receipt ($LATENESS_RUNS runs)"
: >"$out/lateness.txt"
for _ in $(seq "$LATENESS_RUNS"); do
    "$PWD/.build/release/chime-bench-daemon" lateness "$chime" "$out/trivial_server" 200 5 >>"$out/lateness.txt"
done

echo "== a hung notification server (never answers Notify): chime list and chime in, 20 runs each"
"$PWD/.build/release/chime-bench-daemon" hung "$chime" "$out/trivial_server" 20 >"$out/hung.txt"
echo "== a slow notification server (answers Notify 2 s late): 10 alarms 1 s apart"
"$PWD/.build/release/chime-bench-daemon" slow "$chime" "$out/trivial_server" 10 >"$out/slow.txt"

CONFIG_RUNS=${CONFIG_RUNS:-15}
echo "== the alarm file: load and validate 10,000 alarms ($CONFIG_RUNS runs), Python's tomllib on the same file, reloads in the daemon"
"$PWD/.build/release/chime-bench-config" load "$out/alarms-10k.toml" 10000 "$CONFIG_RUNS" >"$out/config-load.txt"
/usr/bin/python3 bench/config/tomllib_parse.py "$out/alarms-10k.toml" "$CONFIG_RUNS" >"$out/config-tomllib.txt"
reload_dir=$(mktemp -d)
"$PWD/.build/release/chime-bench-config" reload "$chime" "$reload_dir" 10000 5 >"$out/config-reload.txt"
rm -rf "$reload_dir"

start_trivial_server "$out/trivial_server"

echo "== the quick loop: make check, its tests built first (target: under 30 s)"
$SWIFT_CMD build --build-tests -Xcxx -DNDEBUG >"$out/check-build.log" 2>&1
check_started=$(date +%s%N)
make --no-print-directory check >"$out/check.log" 2>&1
echo "$(( ($(date +%s%N) - check_started) / 1000000 )) $(grep -o 'Test run with [0-9]* tests' "$out/check.log" | tail -1 | grep -o '[0-9]*')" >"$out/check.txt"

echo "== the daemon under the simulator: 10,000 simulated months on every core (target: under 2 minutes)"
make --no-print-directory simulate SEEDS=10000 >"$out/simulate.log" 2>&1 || true
grep -E "^[0-9]+ seeds of|^FAILED" "$out/simulate.log" | tail -1 >"$out/simulate.txt"

echo "== nextFireDate for 100,000 random calendar rules (3 runs)"
: >"$out/nextfire.txt"
for _ in 1 2 3; do "$PWD/.build/release/chime-bench-nextfire" 100000 >>"$out/nextfire.txt"; done

echo "== next occurrence of 100,000 random iCalendar recurrences (3 runs), and python-dateutil on 300 of them"
: >"$out/rrule.txt"
for _ in 1 2 3; do "$PWD/.build/release/chime-bench-nextfire" 100000 rrule "$out/rrules.txt" >>"$out/rrule.txt"; done
/usr/bin/python3 bench/rrule_dateutil.py "$out/rrules.txt" 300 >"$out/rrule-dateutil.txt"

echo "== reading 100,000 random phrases, English and German (3 runs), and python's dateparser on 1,000 of the one-off ones"
: >"$out/phrase.txt"
for _ in 1 2 3; do "$PWD/.build/release/chime-bench-nextfire" 100000 phrase "$out/phrases.txt" >>"$out/phrase.txt"; done
/usr/bin/python3 bench/phrase_dateparser.py "$out/phrases.txt" 1000 >"$out/phrase-dateparser.txt"

echo "== reading 100,000 random phrases in each of English, German, French and Spanish: all four languages read vs that one alone"
"$PWD/.build/release/chime-bench-nextfire" 100000 languages >"$out/languages.txt"

echo "== 10,000 weekday alarms with three holiday calendars, planned (3 runs)"
: >"$out/holidays.txt"
for _ in 1 2 3; do "$PWD/.build/release/chime-bench-nextfire" 10000 holidays >>"$out/holidays.txt"; done

SYNC_ROUNDS=${SYNC_ROUNDS:-20}
echo "== one alarm, two machines through radicale and vdirsyncer: add on A → known on B, Stop on A → silence on B ($SYNC_ROUNDS rounds)"
/usr/bin/python3 bench/two_machines.py "$chime" "$out/trivial_server" "$SYNC_ROUNDS" 2>"$out/two-machines.log" >"$out/two-machines.json"

IDLE_SECONDS=${IDLE_SECONDS:-60}
echo "== the daemon with 100,000 alarms (idle for $IDLE_SECONDS s)"
"$PWD/.build/release/chime-bench-daemon" "$chime" 100000 "$IDLE_SECONDS" >"$out/daemon.txt"

echo "== in-process Notify: chime's dbus layer vs raw libdbus (trivial server, $INPROC_RUNS alternated runs)"
: >"$out/inprocess.txt"
for _ in $(seq "$INPROC_RUNS"); do
    echo "raw $("$out/raw_notify" 2000 20000)" >>"$out/inprocess.txt"
    echo "chime $("$bench" 2000 20000)" >>"$out/inprocess.txt"
done

whole_process() {  # $1: label, $2: rounds, then NAME CMD... groups separated by --
    local label=$1 rounds=$2
    shift 2
    echo "== whole process, $label ($rounds alternated rounds)"
    "$out/spawn_timer" "$rounds" "$@" >"$out/whole-$label.txt"
}

gdbus_args=(gdbus call --session --dest org.freedesktop.Notifications --object-path /org/freedesktop/Notifications
            --method org.freedesktop.Notifications.Notify bench 0 "" Summary Body "[]"
            "{'urgency': <byte 1>, 'sender-pid': <int64 1>}" 5000)
# spawn_timer shuffles the order every round: no command always follows the same one (what ran
# just before a start moves it by several per cent). No two commands run from the same file.
whole_process trivial "$ROUNDS" \
    -- chime "$chime" notify -a bench -t 5000 Summary Body \
    -- notify-send notify-send -a bench -t 5000 Summary Body \
    -- chime-shipped "$shipped" notify -a bench -t 5000 Summary Body \
    -- gdbus "${gdbus_args[@]}" \
    -- as-notify-send "$as_notify_send" -a bench -t 5000 Summary Body \
    -- dbus-send dbus-send --session --print-reply --dest=org.freedesktop.Notifications /org/freedesktop/Notifications \
       org.freedesktop.Notifications.Notify string:bench uint32:0 string: string:Summary string:Body array:string: \
       dict:string:string: int32:5000 \
    -- swift-hello "$out/swift-hello"

# The same against dunst (dbus-send cannot write a{sv}, which dunst insists on).
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
start_dunst
gdbus_args[${#gdbus_args[@]}-1]=100
whole_process dunst "$DUNST_ROUNDS" \
    -- chime "$chime" notify -a bench -t 100 Summary Body \
    -- notify-send notify-send -a bench -t 100 Summary Body \
    -- chime-shipped "$shipped" notify -a bench -t 100 Summary Body \
    -- gdbus "${gdbus_args[@]}" \
    -- as-notify-send "$as_notify_send" -a bench -t 100 Summary Body

python3 scripts/bench_report.py "$out"
