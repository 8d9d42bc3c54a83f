#!/usr/bin/env bash
# Generates what `make install` installs besides the binary, from the release binary itself:
# man pages (swift-argument-parser's generate-manual tool, one page per subcommand) and bash, zsh
# and fish completions (chime --generate-completion-script). Output: .build/dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${RELEASE_SCRATCH:-.build}
chime=${1:-$scratch/release/chime}
out=.build/dist
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"

# The generator ships with swift-argument-parser (already resolved for chime); built once, unoptimised:
# it runs once a build, and its debug build costs 16 s of CPU where a release build costs 37 s.
parser=$scratch/checkouts/swift-argument-parser
tool=$scratch/tools/debug/generate-manual
if [ ! -x "$tool" ]; then
    swift build --package-path "$parser" --scratch-path "$scratch/tools" --product generate-manual >&2
fi
# The pages carry the date of the last commit, so a rebuild of the same commit gives the same pages.
date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
"$tool" "$chime" --multi-page --date "$date" --section 1 --authors "the chime developers" --output-directory "$out/man"
# The generator names subcommand pages chime.config.check.1; man pages of subcommands are named
# chime-config-check(1) (as git's are), so `man chime-daemon` finds them. References follow.
for page in "$out"/man/chime.*.1; do
    name=$(basename "$page" .1)
    mv "$page" "$out/man/${name//./-}.1"
done
sed -i -E -e ':a' -e 's/^(\.Xr chime(-[a-z-]+)?)\.([a-z])/\1-\3/' -e 'ta' \
    -e ':b' -e 's/^(\.Dt CHIME(-[A-Z-]+)?)\.([A-Z])/\1-\3/' -e 'tb' "$out"/man/*.1
# mdoc as man-db's whatis and groff expect it: the page's own name in NAME (chime-daemon, while the
# synopsis shows the command, "chime daemon"), a description without quotes, .Pp between paragraphs.
for page in "$out"/man/*.1; do
    command=$(sed -n 's/^\.Nm "\(.*\)"$/\1/p' "$page" | head -1)
    if [ -n "$command" ]; then
        sed -i -e "0,/^\.Nm \".*\"\$/s//.Nm $(basename "$page" .1)/" -e "s/^\.Nm\$/.Nm \"$command\"/" "$page"
    fi
    sed -i -E -e 's/^\.Nd "(.*)"$/.Nd \1/' -e 's/^$/.Pp/' "$page"
done

# Completion files are sourced, not run: no #! line.
"$chime" --generate-completion-script bash | sed '1{/^#!/d}' >"$out/completions/chime.bash"
"$chime" --generate-completion-script zsh >"$out/completions/_chime"
"$chime" --generate-completion-script fish >"$out/completions/chime.fish"
echo "dist: $(ls "$out/man" | wc -l) man pages, 3 completion scripts in $out" >&2

# The popups' translations (po/LANG.po) as gettext catalogues: locale/LANG/LC_MESSAGES/chime.mo.
for po in po/*.po; do
    lang=$(basename "$po" .po)
    mkdir -p "$out/locale/$lang/LC_MESSAGES"
    msgfmt --check -o "$out/locale/$lang/LC_MESSAGES/chime.mo" "$po"
done

# The app's desktop entry and metainfo, with every translation in po/ merged in.
if [ "${APP:-0}" = 1 ]; then
    mkdir -p "$out/app"
    msgfmt --desktop --template=packaging/app/org.chime.Alarms.desktop.in -d po -o "$out/app/org.chime.Alarms.desktop"
    # msgfmt knows the metainfo's rules by its name (*.metainfo.xml).
    release_date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
    sed -e "s|@VERSION@|${VERSION:?}|" -e "s|@DATE@|$release_date|" -e "s|@HOMEPAGE@|${HOMEPAGE:?}|g" \
        packaging/app/org.chime.Alarms.metainfo.xml.in >"$out/app/template.metainfo.xml"
    msgfmt --xml --template="$out/app/template.metainfo.xml" -d po -o "$out/app/org.chime.Alarms.metainfo.xml"
    rm "$out/app/template.metainfo.xml"
    echo "dist: the app's desktop entry and metainfo in $out/app" >&2
fi
