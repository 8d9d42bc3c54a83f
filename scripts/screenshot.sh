#!/usr/bin/env bash
# Takes docs/chime-alarm.png: a real chime alarm, fired by `chime daemon` from the alarm file and
# shown by dunst under Xvfb, captured with ImageMagick's `import`. Usage: screenshot.sh CHIME OUT.PNG
set -euo pipefail
cd "$(dirname "$0")/.."
chime=$(realpath "$1")
png=$2
source scripts/private-session.sh
start_private_bus --display 900x300
cat >"$session_dir/dunstrc" <<'CONF'
[global]
    font = DejaVu Sans 13
    width = 520
    origin = top-right
    offset = 20x20
    padding = 14
    horizontal_padding = 16
    frame_width = 2
    frame_color = "#f8c64a"
    corner_radius = 8
    markup = full
    format = "<b>%s</b>\n%b"
[urgency_critical]
    background = "#2d3e50"
    foreground = "#ffffff"
    frame_color = "#f8c64a"
    timeout = 0
CONF
start_dunst "$session_dir/dunstrc"

# The school-day alarm from config/, due in two seconds.
export HOME=$session_dir/home
mkdir -p "$HOME/.config/chime"
cat >"$HOME/.config/chime/alarms.toml" <<'TOML'
[[alarm]]
label = "Homeroom"
when = "in 2s"
body = "Check the guidance list: 3 students are waiting."
TOML
"$chime" daemon 2>"$session_dir/daemon.log" &
session_pids+=("$!")
for _ in $(seq 600); do "$chime" list >/dev/null 2>&1 && break; sleep 0.05; done
sleep 3
# The popup sits top-right (origin and offset above); keep a margin around it.
import -window root -crop 590x110+310+5 +repage "$png"
echo "wrote $png" >&2
