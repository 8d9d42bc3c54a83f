#!/usr/bin/env bash
# Builds .build/chime_VERSION_ARCH.deb with dpkg-deb: `make install PREFIX=/usr` into a staging
# root, Debian's documentation conventions (compressed man pages and changelog, copyright), the
# binary stripped, dependencies from dpkg-shlibdeps, then lintian when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1
arch=$(dpkg --print-architecture)
stage=.build/deb
root=$stage/root
rm -rf "$stage"
mkdir -p "$root"

# Position-independent, as Debian builds binaries (address randomisation), at ~0.6 ms of start-up.
make --no-print-directory install PIE=1 PREFIX=/usr DESTDIR="$PWD/$root" >&2
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/chime"

doc=$root/usr/share/doc/chime
gzip -9n "$root"/usr/share/man/man1/*.1
install -m644 packaging/deb/copyright "$doc/copyright"
# A native package (chime packages itself): its changelog is changelog.gz.
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
sed -e "s/@VERSION@/$version/" -e "s/@DATE@/$date/" packaging/deb/changelog.in | gzip -9n >"$doc/changelog.gz"

# Shared libraries the binary needs, as package dependencies (the Swift runtime is linked in).
mkdir -p "$stage/debian"
printf 'Source: chime\n\nPackage: chime\nArchitecture: any\n' >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"root/usr/bin/chime" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
    packaging/deb/control.in >"$root/DEBIAN/control"
# libdbus linked in (STATIC_DBUS=1): say which source it came from, as Debian policy asks, so a
# security update of dbus shows which packages to rebuild.
if ! readelf -d "$root/usr/bin/chime" | grep -q 'NEEDED.*libdbus-1'; then
    echo "Built-Using: dbus (= $(dpkg-query -W -f='${source:Version}' libdbus-1-dev))" >>"$root/DEBIAN/control"
fi
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

deb=.build/chime_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
if command -v lintian >/dev/null; then
    # Errors fail the build; the package has no warnings either (README, "Install").
    lintian --fail-on error "$deb" >&2
fi
