# Sourced by demo.sh, bench.sh and screenshot.sh: the one test desktop (scripts/testdesktop.py), served
# to this shell, and a scratch directory; both go when the script exits (every process by its PID).
#   start_private_bus [PARTS]  the desktop's session bus (and PARTS: testdesktop.py's options, e.g.
#                              --display 900x300): exports DBUS_SESSION_BUS_ADDRESS
#   start_dunst [DUNSTRC]      Xvfb (exports DISPLAY) and dunst on that bus, answering
#   start_trivial_server BIN   starts bench/c/trivial_server's binary, waits until it owns its name;
#                              sets server_pid
session_pids=()
session_dir=$(mktemp -d)
desktop_harness=$(dirname "${BASH_SOURCE[0]}")/testdesktop.py
stop_private_session() {
    for pid in "${session_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${session_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "${desktop_pid:-}" ]; then
        # The end of its input: the harness stops the desktop's processes and exits.
        eval "exec ${desktop_in}>&-"
        wait "$desktop_pid" 2>/dev/null || true
    fi
    rm -rf "$session_dir"
}
trap stop_private_session EXIT

# Asks the desktop one thing and takes in its answer (the variables it exports).
desktop_ask() {
    local answer
    echo "$1" >&"$desktop_in"
    read -r answer <&"$desktop_out"
    eval "$answer"
}

start_private_bus() {
    coproc DESKTOP { exec /usr/bin/python3 "$desktop_harness" serve --shell "$@"; }
    desktop_pid=$DESKTOP_PID
    desktop_in=${DESKTOP[1]}
    desktop_out=${DESKTOP[0]}
    local answer
    read -r answer <&"$desktop_out" || { echo "the test desktop did not start" >&2; return 1; }
    eval "$answer"
}

start_dunst() {
    desktop_ask "start dunst${1:+ $1}"
}

start_trivial_server() {
    "$1" >"$session_dir/server.out" &
    server_pid=$!
    session_pids+=("$server_pid")
    for _ in $(seq 1500); do [ -s "$session_dir/server.out" ] && break; sleep 0.02; done
}
