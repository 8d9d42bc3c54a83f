#!/bin/sh
# The translation template (po/chime.pot) says every string the sources and the app's files have,
# and each language of po/LINGUAS translates every one of them: none untranslated, none fuzzy (a
# fuzzy translation is not used: the person would read English). Says what is missing, and how to
# bring the template and the catalogues up to date.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scripts/make-pot.sh "$tmp/chime.pot"
ids() { msgattrib --no-wrap --no-location "$1" | grep '^msgid ' | sort; }
failed=0
if [ "$(ids "$tmp/chime.pot")" != "$(ids po/chime.pot)" ]; then
    echo "po/chime.pot is not current: make po/chime.pot, then msgmerge --update po/LANG.po po/chime.pot for each language"
    failed=1
fi
for lang in $(cat po/LINGUAS); do
    msgmerge --quiet -o "$tmp/$lang.po" "po/$lang.po" "$tmp/chime.pot"
    missing=$(msgattrib --untranslated --no-wrap "$tmp/$lang.po" | grep -c '^msgid ' || true)
    fuzzy=$(msgattrib --only-fuzzy --no-wrap "$tmp/$lang.po" | grep -c '^msgid ' || true)
    # (msgattrib's output starts with the header's empty msgid when anything is listed.)
    [ "$missing" -gt 0 ] && missing=$((missing - 1))
    [ "$fuzzy" -gt 0 ] && fuzzy=$((fuzzy - 1))
    if [ "$missing" -gt 0 ] || [ "$fuzzy" -gt 0 ]; then
        echo "po/$lang.po: $missing untranslated, $fuzzy fuzzy (msgattrib --untranslated / --only-fuzzy po/$lang.po says which)"
        failed=1
    fi
done
exit $failed
