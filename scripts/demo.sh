#!/usr/bin/env bash
# Shows a real notification with the chime binary given as $1.
# Uses the desktop's notification server when there is one; otherwise starts a
# private dbus-daemon and dunst under Xvfb, shows the notification there, and
# stops what it started (by PID).
set -euo pipefail
chime=${1:-.build/release/chime}
pids=()
workdir=""
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -n "$workdir" ] && rm -rf "$workdir"
}
trap cleanup EXIT

if "$chime" server-info >/dev/null 2>&1; then
    echo "Using the notification server of this session:"
else
    echo "No notification server on a session bus here: starting a private bus and dunst under Xvfb."
    workdir=$(mktemp -d)
    cat >"$workdir/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:dir=$workdir</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy>
</busconfig>
CONF
    exec 3< <(dbus-daemon --config-file="$workdir/bus.conf" --nofork --print-address=1 --print-pid=1 2>"$workdir/bus.log")
    read -r DBUS_SESSION_BUS_ADDRESS <&3
    read -r bus_pid <&3
    pids+=("$bus_pid")
    export DBUS_SESSION_BUS_ADDRESS
    Xvfb -displayfd 5 -nolisten tcp -screen 0 1280x800x24 5>"$workdir/display" 2>"$workdir/xvfb.log" &
    pids+=("$!")
    for _ in $(seq 100); do [ -s "$workdir/display" ] && break; sleep 0.05; done
    export DISPLAY=":$(cat "$workdir/display")"
    printf '[global]\n    notification_limit = 5\n' >"$workdir/dunstrc"
    dunst -config "$workdir/dunstrc" 2>"$workdir/dunst.log" &
    pids+=("$!")
    for _ in $(seq 100); do "$chime" server-info >/dev/null 2>&1 && break; sleep 0.05; done
fi
"$chime" server-info
echo
"$chime" capabilities
echo
echo "Showing a notification (chime notify -p -u critical -t 4000 ...); its id:"
"$chime" notify -p -u critical -t 4000 -i alarm-clock "Wait!" "Your eggs are almost done!"
echo "Waiting for it to expire (chime notify -w --json):"
"$chime" notify -w --json -t 1500 "chime" "This one closes by itself in 1.5 s"
