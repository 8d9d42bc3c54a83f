#!/usr/bin/env bash
# Writes packaging/chime.order: the functions a `chime notify` runs, in the order it first runs
# them, for the linker to lay out together (make release links chime with lld and this file).
# A start then touches fewer pages of text: fewer page faults, a smaller RSS (docs/BENCHMARKS.md,
# issue 25). Run after changing what a notification's path calls:
#     make release && scripts/order-file.sh .build/release/chime
# (make release links position-dependent: the addresses run are the addresses in the file.)
# A stale file is harmless (names no longer there are skipped); it only lays out less well. SwiftPM
# does not relink for a changed list: `rm .build/front/release/chime && make release` does.
set -euo pipefail
cd "$(dirname "$0")/.."
chime=${1:?usage: scripts/order-file.sh PATH-TO-AN-UNSTRIPPED-RELEASE-CHIME}
out=packaging/chime.order
readelf -h "$chime" | grep -q 'Type:.*EXEC' || { echo "order-file: $chime is position-independent; use make release's (PIE=0)" >&2; exit 2; }
command -v valgrind >/dev/null || scripts/install-packages.sh valgrind
source scripts/private-session.sh
start_private_bus
work=$session_dir  # removed when the script ends
gcc -O2 -o "$work/trivial_server" bench/c/trivial_server.c $(pkg-config --cflags --libs dbus-1)
start_trivial_server "$work/trivial_server"

# Every superblock run, in order (valgrind's lackey), on the paths scripts take most: a
# notification, the same as notify-send, and a refused argument.
ln -s "$(readlink -f "$chime")" "$work/notify-send"
for run in "$chime notify -a bench -t 5000 Summary Body" "$work/notify-send -u critical Summary Body" \
           "$chime notify -u never Summary"; do
    valgrind --tool=lackey --trace-superblocks=yes --log-file="$work/trace" $run >/dev/null 2>&1 || true
    awk '$1 == "SB" {print $2}' "$work/trace" >>"$work/blocks"
done
nm -n --defined-only "$chime" | awk '$2 ~ /^[tTwW]$/ {print $1, $3}' >"$work/symbols"
/usr/bin/python3 - "$work/symbols" "$work/blocks" "$out" <<'PY'
import bisect, sys
symbols = sorted((int(a, 16), n.strip()) for a, n in (line.split(None, 1) for line in open(sys.argv[1])))
starts = [a for a, _ in symbols]
order, seen = [], set()
for line in open(sys.argv[2]):
    a = int(line, 16)
    i = bisect.bisect_right(starts, a) - 1
    if i < 0 or a > starts[-1] + (1 << 16):  # the loader, libc, libm: not ours to lay out
        continue
    name = symbols[i][1]
    if name not in seen:
        seen.add(name)
        order.append(name)
if len(order) < 100:
    sys.exit(f"order-file: only {len(order)} functions seen run; is valgrind working?")
with open(sys.argv[3], "w") as f:
    f.write("".join(n + "\n" for n in order))
print(f"{sys.argv[3]}: {len(order)} functions")
PY
