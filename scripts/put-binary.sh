#!/bin/sh
# Puts the binary FROM at TO the way a running system expects: unchanged when it is the same (make
# install, make deb and the packaging tests build again what is built), else copied beside it and
# renamed over it, so that a process starting TO at that moment runs the old file or the new one,
# never a half-written one (and never fails "Text file busy", as an exec does while cp writes).
#
#     scripts/put-binary.sh FROM TO
set -eu
from=$1 to=$2
cmp -s "$from" "$to" 2>/dev/null && exit 0
echo "cp $from $to"
new=$to.new.$$
trap 'rm -f "$new"' EXIT
cp "$from" "$new"
mv -f "$new" "$to"
