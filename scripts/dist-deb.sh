#!/bin/bash
# make deb DIST=NAME: chime's packages built inside a root of that Debian release (scripts/dist-root.sh,
# made once under .build-NAME and reused), so that what links the release's libraries (chime-eds:
# libecal; the app: GTK and libadwaita) links that release's, and dpkg-shlibdeps and lintian are the
# release's own. The packages land in .build-NAME/.
#
#     scripts/dist-deb.sh DIST PACKAGES...
#
# The Swift toolchain that runs here runs there too (it is bound read-only into the root, where the
# release has none of its own), and so are the local folders git's url.*.insteadOf names (where the
# Swift packages chime depends on are mirrored). The source is copied in (the files git knows, and
# those it would add), so nothing the build makes in the root touches this tree's .build.
set -u
cd "$(dirname "$0")/.."
dist=${1:?usage: scripts/dist-deb.sh DIST PACKAGES...}
shift
root=$(scripts/dist-root.sh "$dist" "$@") || exit $?
swift=$(command -v swift) || { echo "dist-deb: no swift on PATH (make deb DIST=... builds with the machine's Swift toolchain: put its usr/bin on PATH)" >&2; exit 1; }
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$swift")")")")  # .../usr/bin/swift -> ...

mounted=()
bind() {
    mkdir -p "$root$1"
    mountpoint -q "$root$1" || { mount --bind -o ro "$1" "$root$1" && mounted+=("$root$1"); }
}
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}"; done; }
trap cleanup EXIT
bind "$toolchain"
for url in $(git config --get-regexp '^url\..*\.insteadof$' | awk '{ print $1 }' | sed 's/^url\.//; s/\.insteadof$//' | sort -u); do
    [ -d "$url" ] && bind "${url%/}"
done
[ -f /etc/gitconfig ] && cp /etc/gitconfig "$root/etc/gitconfig"
mkdir -p "$root/proc"
mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc" && mounted+=("$root/proc"); }

# The source, as git sees it (with what is not committed yet).
rm -rf "$root/chime-src" && mkdir -p "$root/chime-src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
    tar --null -T - -cf - | tar -xf - -C "$root/chime-src"

echo "dist-deb: building chime's packages inside $dist's root" >&2
chroot "$root" /usr/bin/env -i PATH="$toolchain/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root LANG=C.UTF-8 \
    bash -c 'cd /chime-src && make --no-print-directory deb' || { echo "dist-deb: make deb failed inside $dist's root" >&2; exit 1; }
out=.build-$dist
for deb in "$root"/chime-src/.build/*.deb; do
    cp "$deb" "$out/"
    echo "$out/$(basename "$deb")"
done
