#!/usr/bin/env bash
# Builds .build/chime_VERSION_ARCH.deb and, where they were built, .build/chime-alarms_VERSION_ARCH.deb
# (the app) and .build/chime-eds_VERSION_ARCH.deb (GNOME's calendars' child, which links libecal)
# with dpkg-deb: `make install PREFIX=/usr` into a staging root, split in two (the command line and
# daemon never pull in GTK), Debian's documentation conventions (compressed man pages and changelog,
# copyright), binaries stripped, dependencies from dpkg-shlibdeps, then lintian when it is installed.
# Prints the path of each package built, the command line's first.
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
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/chime" \
    "$root/usr/libexec/chime/chime-commands"

# The app's files go to a package of their own.
app_root=$stage/app-root
if [ -x "$root/usr/bin/chime-alarms" ]; then
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/chime-alarms"
    for f in usr/bin/chime-alarms usr/share/applications/org.chime.Alarms.desktop usr/share/metainfo/org.chime.Alarms.metainfo.xml \
             usr/share/man/man1/chime-alarms.1 \
             $(cd "$root" && find usr/share/icons -name 'org.chime.Alarms*'); do
        mkdir -p "$app_root/$(dirname "$f")"
        mv "$root/$f" "$app_root/$f"
    done
    find "$root/usr/share" -type d -empty -delete
fi

# chime-eds too: the command line and the daemon never pull in libecal and GLib.
eds_root=$stage/eds-root
if [ -x "$root/usr/libexec/chime/chime-eds" ]; then
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/libexec/chime/chime-eds"
    mkdir -p "$eds_root/usr/libexec/chime"
    mv "$root/usr/libexec/chime/chime-eds" "$eds_root/usr/libexec/chime/chime-eds"
fi

# A native package (chime packages itself): its changelog is changelog.gz.
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
mkdir -p "$stage/debian"

# package ROOT NAME BINARY CONTROL_IN [MORE_BINARIES...]: the documentation, the dependencies of the
# binaries (the Swift runtime is linked in) from dpkg-shlibdeps, the control file and checksums, then
# the .deb (built in the background: the script waits for each before lintian).
package() {
    local root=$1 name=$2 binary=$3 control_in=$4
    shift 4
    local executables=("-e${root#"$stage"/}/$binary")
    for more in "$@"; do executables+=("-e${root#"$stage"/}/$more"); done
    local doc=$root/usr/share/doc/$name
    mkdir -p "$doc"
    if compgen -G "$root/usr/share/man/man1/*.1" >/dev/null; then gzip -9n "$root"/usr/share/man/man1/*.1; fi
    install -m644 packaging/deb/copyright "$doc/copyright"
    sed -e "s/^chime (/$name (/" -e "s/@VERSION@/$version/" -e "s/@DATE@/$date/" packaging/deb/changelog.in | gzip -9n >"$doc/changelog.gz"
    printf 'Source: chime\n\nPackage: %s\nArchitecture: any\n' "$name" >"$stage/debian/control"
    local depends
    depends=$(cd "$stage" && dpkg-shlibdeps -O "${executables[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
    [ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies of $binary" >&2; exit 1; }
    mkdir -p "$root/DEBIAN"
    local size
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
        "$control_in" >"$root/DEBIAN/control"
    # libdbus linked in (STATIC_DBUS=1): say which source it came from, as Debian policy asks, so a
    # security update of dbus shows which packages to rebuild.
    if ! readelf -d "$root/$binary" | grep -q 'NEEDED.*libdbus-1'; then
        echo "Built-Using: dbus (= $(dpkg-query -W -f='${source:Version}' libdbus-1-dev))" >>"$root/DEBIAN/control"
    fi
    (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
    chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
    local deb=.build/${name}_${version}_${arch}.deb
    # (Compressed side by side: xz takes one core, 14 s for the command line's package alone.)
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2 &
    packing+=($!)
    built+=("$deb")
}

built=() packing=()
package "$root" chime usr/bin/chime packaging/deb/control.in usr/libexec/chime/chime-commands
if [ -d "$app_root" ]; then
    package "$app_root" chime-alarms usr/bin/chime-alarms packaging/deb/control-app.in
fi
if [ -d "$eds_root" ]; then
    package "$eds_root" chime-eds usr/libexec/chime/chime-eds packaging/deb/control-eds.in
fi
for pid in "${packing[@]}"; do wait "$pid" || { echo "make-deb: dpkg-deb failed" >&2; exit 1; }; done
if command -v lintian >/dev/null; then
    # Errors fail the build; the one warning, hardening-no-relro, is docs/install.md's. One run for
    # all the packages, side by side: lintian's start is most of its time.
    lintian --fail-on error --jobs "$(nproc)" "${built[@]}" >&2
fi
printf '%s\n' "${built[@]}"
