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
    start_dunst "$chime"
fi
"$chime" server-info
echo
"$chime" capabilities
echo
echo "Showing a notification (chime notify -p -u critical -t 4000 ...); its id:"
"$chime" notify -p -u critical -t 4000 -i alarm-clock "Wait!" "Your eggs are almost done!"
echo "Waiting for it to expire (chime notify -w --json):"
"$chime" notify -w --json -t 1500 "chime" "This one closes by itself in 1.5 s"
