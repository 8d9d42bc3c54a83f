#!/usr/bin/env bash
# The compatibility matrix: chime against every notification server Debian packages, each started
# as its desktop starts it on a private bus (scripts/desktops/matrix.py). Usage:
#   test-desktops.sh CHIME OUT-DIR [SERVER ...]
# As root it runs the matrix as the unprivileged user `nobody` (sway refuses to run as root), with
# a copy of CHIME that user can run. Exits 1 when chime failed a check on a server that ran.
# With DOCS=1, a full run also writes its table into docs/SERVERS.md and its screenshots into
# docs/servers/ (halved in size).
set -euo pipefail
cd "$(dirname "$0")/.."
chime=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
mkdir -p "$out"
if [ "$(id -u)" -ne 0 ]; then
    exec /usr/bin/python3 scripts/desktops/matrix.py --chime "$chime" --out "$out" "$@"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r scripts/desktops "$work/desktops" && cp scripts/testdesktop.py "$work/"
mkdir -p "$work/packaging" && cp packaging/chime.svg packaging/chime.desktop "$work/packaging/"
# (chime hands most commands to chime-commands, found beside it.)
cp "$chime" "$work/chime" && cp "$(dirname "$chime")/chime-commands" "$work/chime-commands"
chmod -R a+rX "$work"
chown nobody "$out"
cd /tmp
status=0
setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env \
    env PATH=/usr/local/bin:/usr/bin:/bin TMPDIR=/tmp LANG=C.UTF-8 \
    /usr/bin/python3 "$work/desktops/matrix.py" --chime "$work/chime" --out "$out" "$@" || status=$?
cd - >/dev/null
if [ "${DOCS:-0}" = 1 ] && [ $# -gt 0 ]; then
    echo "DOCS=1 updates the docs from a run of every server; not from: $*" >&2
elif [ "${DOCS:-0}" = 1 ]; then
    /usr/bin/python3 - "$out/SERVERS.md" docs/SERVERS.md <<'PY'
import re, sys
table = open(sys.argv[1]).read()
doc = open(sys.argv[2]).read()
begin, end = "<!-- matrix:begin -->\n", "<!-- matrix:end -->"
start, stop = doc.index(begin) + len(begin), doc.index(end)
open(sys.argv[2], "w").write(doc[:start] + table + doc[stop:])
PY
    mkdir -p docs/servers
    for png in "$out"/*.png; do convert "$png" -resize 50% "docs/servers/$(basename "$png")"; done
    echo "updated docs/SERVERS.md and docs/servers/"
fi
exit $status
