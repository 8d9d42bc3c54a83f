#!/bin/sh
# Writes the translation template to OUT: every tr("...") of the sources, and the app's desktop
# entry and metainfo. `make po/chime.pot` runs it; scripts/check-translations.sh compares with it.
# Usage: scripts/make-pot.sh OUT VERSION
set -eu
cd "$(dirname "$0")/.."
out=$1
version=${2:-0}
xgettext --language=C --from-code=UTF-8 --keyword=tr:1 --add-comments=TRANSLATORS: --package-name=chime \
    --package-version="$version" --msgid-bugs-address= -o "$out" $(grep -l 'tr("' Sources/*/*.swift) 2>/dev/null
xgettext --join-existing --language=Desktop --add-comments=TRANSLATORS: -o "$out" packaging/app/org.chime.Alarms.desktop.in
xgettext --join-existing --its=/usr/share/gettext/its/metainfo.its -o "$out" packaging/app/org.chime.Alarms.metainfo.xml.in
