#!/usr/bin/env bash
# make release: with glibc, chime keeps argv as the C library hands it over (Sources/CArgv) instead of
# the static Swift runtime's search of /proc/self/maps. Reads chime's link map ($1) for what was
# really linked: whichever member of libswiftCore.a defines the runtime's argv function must have
# been left out. No object or internal name is assumed: the member is looked up in the archive.
set -euo pipefail
map=$1
if ! getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
    echo "note: not glibc: chime uses the Swift runtime's own way to find argv (Sources/CArgv defines nothing)"
    exit 0
fi
resources=$(swiftc -print-target-info | sed -n 's/.*"runtimeResourcePath": "\(.*\)".*/\1/p')
core=$(dirname "$resources")/swift_static/linux/libswiftCore.a
[ -f "$core" ] || { echo "error: $core not found (the static Swift runtime chime links)" >&2; exit 1; }
[ -f "$map" ] || { echo "error: no link map at $map" >&2; exit 1; }
member=$(nm -A --defined-only "$core" 2>/dev/null | awk '$NF == "_swift_stdlib_getUnsafeArgvArgc" { n = split($1, part, ":"); print part[n - 1]; exit }')
if [ -z "$member" ]; then
    # The runtime no longer finds argv through that function: CArgv overrides nothing (correct, but
    # its start-up saving is gone). Said, not failed: a newer toolchain must still build chime.
    echo "warning: the Swift runtime in $core defines no _swift_stdlib_getUnsafeArgvArgc: Sources/CArgv saves nothing with this toolchain" >&2
    exit 0
fi
if grep -qF "libswiftCore.a($member)" "$map"; then
    echo "error: chime links the runtime's own argv search ($member of libswiftCore.a) beside Sources/CArgv" >&2
    exit 1
fi
echo "chime keeps argv from glibc: $member of libswiftCore.a (the runtime's search) is not linked"
