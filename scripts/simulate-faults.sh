#!/bin/sh
# Puts back, one at a time, faults of the kinds chime has fixed before (Tests/simulation/faults),
# and says how long `make simulate` took to find each: the seed, the seconds, the shrunk history.
# Each patch is applied to the working tree, built, run, and taken out again (also when stopped).
# Usage: scripts/simulate-faults.sh [PATCH...]
set -eu
cd "$(dirname "$0")/.."
patches=${*:-Tests/simulation/faults/*.patch}
mkdir -p .build
current=""
restore() { if [ -n "$current" ]; then git apply -R "$current" && current=""; fi; }
trap restore EXIT INT TERM
for patch in $patches; do
    name=$(basename "$patch" .patch)
    git apply "$patch"
    current=$patch
    swift build -c release -Xcxx -DNDEBUG --scratch-path .build/simulate-build --product chime-simulate >.build/simulate-faults.log 2>&1 || { grep error: .build/simulate-faults.log; exit 1; }
    echo "== $name"
    # Seeds until one fails (a minute at most); the failure's time is measured before shrinking.
    .build/simulate-build/release/chime-simulate --seeds 100000 --within 60 2>&1 | grep -E "^(FAILED|seed [0-9]+ failed|shrunk|[0-9]+ seeds|no failure)" || true
    restore
done
