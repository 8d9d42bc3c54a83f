#!/usr/bin/env bash
# Fails when a build log holds a compiler warning about chime's own code (Sources, Tests): the
# build stays free of warnings, and CI (a clean clone, so every file is compiled) keeps it so.
# SwiftPM's own notes ("prohibited flag(s)" in the system libraries' pkg-config flags) are not
# the compiler's and are not counted.
# Usage: scripts/check-warnings.sh BUILD-LOG
set -euo pipefail
log=${1:?usage: scripts/check-warnings.sh BUILD-LOG}
root=$(cd "$(dirname "$0")/.." && pwd)
found=$(grep -E "^${root}/(Sources|Tests)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" | sort -u || true)
if [ -n "$found" ]; then
    echo "$found" | sed "s|^${root}/||"
    echo "the build has $(echo "$found" | wc -l) warning(s) in chime's code: fix them (the build stays free of warnings)"
    exit 1
fi
