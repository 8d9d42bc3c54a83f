#!/bin/bash
# A Debian release's root, made once from Debian's archive with debootstrap and reused: where chime
# is packaged, built and tested for a release other than the machine's (make deb DIST=trixie, make
# test-dist DIST=trixie; issue 65).
#
#     scripts/dist-root.sh DIST [PACKAGES...]
#
# DIST is a release's code name (trixie, bookworm). The root is .build-DIST/root; it is made in
# .build-DIST/root.new and renamed when debootstrap has finished, so an interrupted or failed run
# leaves no half-made root behind (the next run starts again). PACKAGES are installed into it with
# apt when missing (the release's own). Prints the root's path on success.
#
# Exit status: 0 made or already there; 2 usage; 3 no archive (debootstrap could not reach Debian's
# archive: a clear message, never a half-made root); 4 debootstrap or apt failed otherwise.
set -u
cd "$(dirname "$0")/.."
dist=${1:-}
[[ "$dist" =~ ^[a-z]+$ ]] || { echo "usage: scripts/dist-root.sh DIST [PACKAGES...] (DIST: a Debian release's code name, such as trixie)" >&2; exit 2; }
shift
[ "$(id -u)" = 0 ] || { echo "dist-root: debootstrap and chroot need root" >&2; exit 2; }
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
dir=$PWD/.build-$dist
root=$dir/root

if [ ! -e "$root/.chime-root-made" ]; then
    command -v debootstrap >/dev/null || scripts/install-packages.sh debootstrap >&2 || exit 4
    mkdir -p "$dir"
    rm -rf "$root.new"
    echo "dist-root: making $dist's root with debootstrap from $mirror (once: it is reused)" >&2
    if ! debootstrap --variant=minbase "$dist" "$root.new" "$mirror" >"$dir/debootstrap.log" 2>&1; then
        rm -rf "$root.new"
        if grep -qiE "Failed getting release file|Couldn't download|unable to resolve|connection (refused|timed out)|Temporary failure" "$dir/debootstrap.log"; then
            echo "dist-root: Debian's archive ($mirror) cannot be reached: no $dist root (see $dir/debootstrap.log)" >&2
            exit 3
        fi
        tail -n 5 "$dir/debootstrap.log" >&2
        echo "dist-root: debootstrap failed for $dist (its log: $dir/debootstrap.log)" >&2
        exit 4
    fi
    # The release's security and updates suites too, as an installed system has them.
    cat >"$root.new/etc/apt/sources.list" <<EOF
deb $mirror $dist main
deb $mirror $dist-updates main
deb http://deb.debian.org/debian-security $dist-security main
EOF
    touch "$root.new/.chime-root-made"
    mv "$root.new" "$root"
fi

# The packages asked for, the release's own, when missing.
missing=()
for package in "$@"; do
    chroot "$root" dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "dist-root: installing into $dist's root: ${missing[*]}" >&2
    if ! { chroot "$root" apt-get update -q && DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$dir/apt.log" 2>&1; then
        tail -n 5 "$dir/apt.log" >&2
        echo "dist-root: apt could not install ${missing[*]} into $dist's root (its log: $dir/apt.log)" >&2
        exit 4
    fi
fi
echo "$root"
