# Sourced by demo.sh and bench.sh: a private session bus, Xvfb and dunst,
# each stopped by its PID when the script exits.
#   start_private_bus          exports DBUS_SESSION_BUS_ADDRESS
#   start_dunst CHIME          starts Xvfb (exports DISPLAY) and dunst, waits until it answers
#   start_trivial_server BIN   starts bench/c/trivial_server's binary, waits until it owns its name;
#                              sets server_pid
session_pids=()
session_dir=$(mktemp -d)
stop_private_session() {
    for pid in "${session_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${session_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$session_dir"
}
trap stop_private_session EXIT

start_private_bus() {
    cat >"$session_dir/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:dir=$session_dir</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy>
</busconfig>
CONF
    exec 3< <(dbus-daemon --config-file="$session_dir/bus.conf" --nofork --print-address=1 --print-pid=1 2>"$session_dir/bus.log")
    read -r DBUS_SESSION_BUS_ADDRESS <&3
    read -r bus_pid <&3
    session_pids+=("$bus_pid")
    export DBUS_SESSION_BUS_ADDRESS
}

start_dunst() {
    local chime=$1
    Xvfb -displayfd 5 -nolisten tcp -screen 0 1280x800x24 5>"$session_dir/display" 2>"$session_dir/xvfb.log" &
    session_pids+=("$!")
    for _ in $(seq 100); do [ -s "$session_dir/display" ] && break; sleep 0.05; done
    export DISPLAY=":$(cat "$session_dir/display")"
    # Few popups on screen, so dunst stays fast.
    printf '[global]\n    notification_limit = 5\n' >"$session_dir/dunstrc"
    dunst -config "$session_dir/dunstrc" 2>"$session_dir/dunst.log" &
    session_pids+=("$!")
    for _ in $(seq 100); do "$chime" server-info >/dev/null 2>&1 && break; sleep 0.05; done
}

start_trivial_server() {
    "$1" >"$session_dir/server.out" &
    server_pid=$!
    session_pids+=("$server_pid")
    for _ in $(seq 100); do [ -s "$session_dir/server.out" ] && break; sleep 0.02; done
}
