#!/bin/bash
# The app on a phone: Phosh in phoc (wlroots' X11 backend under Xvfb, a 360×720 screen at scale 2),
# unlocked, on a private session bus in a scratch home; the daemon with three alarms of an alarm
# file, the app as a Wayland client, then a ringing alarm. Writes OUT/phone-alarms.png and
# OUT/phone-ringing.png (halved). Usage: phone-screenshots.sh CHIME CHIME_ALARMS OUT
# (Needs phosh, phoc, grim, xvfb, dbus-daemon, imagemagick; stops what it started by PID.)
set -euo pipefail
if [ -z "${PHONE_SHOTS_INSIDE:-}" ]; then
    export PHONE_SHOTS_INSIDE=1
    exec dbus-run-session -- "$0" "$@"
fi
chime=$(realpath "$1"); app=$(realpath "$2"); out=$(realpath -m "$3")
mkdir -p "$out"
scratch=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
export HOME=$scratch XDG_RUNTIME_DIR=$scratch/run XDG_CONFIG_HOME=$scratch/config XDG_DATA_HOME=$scratch/data \
    XDG_CACHE_HOME=$scratch/cache XDG_STATE_HOME=$scratch/state GSETTINGS_BACKEND=memory
mkdir -m 700 -p "$XDG_RUNTIME_DIR"; mkdir -p "$XDG_CONFIG_HOME/chime"
cat > "$XDG_CONFIG_HOME/chime/alarms.toml" <<'TOML'
[[alarm]]
id = "up"
title = "Get up"
when = "06:45 mon-fri"
sound = "bell"

[[alarm]]
id = "gym"
title = "Gym"
when = "18:00 mon,wed"

[[alarm]]
id = "bins"
title = "Bins out"
when = "every other tuesday 19:30"
TOML
Xvfb :77 -screen 0 1080x1600x24 -nolisten tcp >"$scratch/xvfb.log" 2>&1 & pids+=($!)
sleep 1
printf '[output:X11-1]\nmode = 720x1440\nscale = 2\n' > "$scratch/phoc.ini"
DISPLAY=:77 WLR_BACKENDS=x11 WLR_RENDERER=pixman phoc -C "$scratch/phoc.ini" -E "/usr/libexec/phosh -U" >"$scratch/phoc.log" 2>&1 & pids+=($!)
for _ in $(seq 60); do ls "$XDG_RUNTIME_DIR" | grep -q '^wayland-[0-9]*$' && break; sleep 0.5; done
export WAYLAND_DISPLAY=$(ls "$XDG_RUNTIME_DIR" | grep '^wayland-[0-9]*$' | head -1)
"$chime" daemon >"$scratch/daemon.log" 2>&1 & pids+=($!)
for _ in $(seq 40); do "$chime" list >/dev/null 2>&1 && break; sleep 0.25; done
sleep 1
XDG_CURRENT_DESKTOP=Phosh GDK_BACKEND=wayland GSK_RENDERER=cairo "$app" >"$scratch/app.log" 2>&1 & pids+=($!)
sleep 4
grim "$scratch/alarms.png"
"$chime" at "$(date -d '+2 sec' '+%Y-%m-%d %H:%M:%S')" --sound bell --id wake "Wake up" >/dev/null
sleep 4
grim "$scratch/ringing.png"
"$chime" stop wake >/dev/null
convert "$scratch/alarms.png" -resize 50% "$out/phone-alarms.png"
convert "$scratch/ringing.png" -resize 50% "$out/phone-ringing.png"
echo "wrote $out/phone-alarms.png and $out/phone-ringing.png"
