#!/usr/bin/env bash
# Shows a real notification with the chime binary given as $1.
# Uses the desktop's notification server when there is one; otherwise starts a
# private dbus-daemon and dunst under Xvfb, shows the notification there, and
# stops what it started (by PID).
set -euo pipefail
chime=${1:-.build/release/chime}
source "$(dirname "$0")/private-session.sh"

if "$chime" server-info >/dev/null 2>&1; then
    echo "Using the notification server of this session:"
else
    echo "No notification server on a session bus here: starting a private bus and dunst under Xvfb."
    start_private_bus
    start_dunst
fi
"$chime" server-info
echo
"$chime" capabilities
echo
echo "Showing a notification (chime notify -p -u critical -t 4000 ...); its id:"
"$chime" notify -p -u critical -t 4000 -i alarm-clock "Wait!" "Your eggs are almost done!"
echo "Waiting for it to expire (chime notify -w --json):"
"$chime" notify -w --json -t 1500 "chime" "This one closes by itself in 1.5 s"

echo
echo "An egg timer through the scheduler daemon (chime in 2s ...):"
if ! "$chime" list >/dev/null 2>&1; then
    # Stopped (by PID) before anything else when the script exits; its state goes with session_dir.
    "$chime" daemon --state-dir "$session_dir/demo-state" 2>"$session_dir/daemon.log" &
    demo_daemon=$!
    session_pids=("$demo_daemon" "${session_pids[@]}")
    for _ in $(seq 600); do "$chime" list >/dev/null 2>&1 && break; sleep 0.05; done
    echo "(started a chime daemon for this demo, pid $demo_daemon, state in a temporary directory)"
fi
"$chime" in 2s --id demo-egg-timer --expire 5s "Wait!" "Your eggs are almost done!"
"$chime" list
sleep 2.5
echo "Delivered:"
"$chime" delivered
