#!/usr/bin/env bash
# Packaging tests (run by `make test` after the Swift tests), on this machine for real:
#  0. make check, the quick loop: its suites exist and what they run is installed (its tests ran
#     with the rest; its time is measured by make bench);
#  1. make install into a scratch prefix and make uninstall leave nothing behind;
#  2. the unit passes systemd-analyze verify, the desktop entry desktop-file-validate;
#  3. bash loads the completion script without errors and completes subcommands;
#  4. D-Bus activation: a private dbus-daemon whose only service directory is the installed one
#     starts `chime daemon` when `chime list` calls, and the call succeeds;
#  4b. waking as documented, as a user who is not root: setcap as the daemon advises works for a
#     daemon started by hand and by D-Bus activation; under NoNewPrivileges the advice is the unit's;
#  5. the .debs build (lintian errors fail them): chime, which pulls in no GTK and no libecal,
#     chime-alarms, the app, and chime-eds (GNOME's calendars); all install with dpkg -i, `chime
#     --version`, `chime-alarms --version`, chime-eds and `man chime` work from the installed paths,
#     and dpkg --purge leaves none of their files;
#  6. the app's desktop entry passes desktop-file-validate and its metainfo appstreamcli validate.
# Processes it starts are stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^public let chimeVersion = "\(.*\)"$/\1/p' Sources/Notifications/Version.swift)
scratch=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$scratch"
}
trap cleanup EXIT
failures=0
pass() { echo "ok - $*"; }
fail() { echo "FAILED - $*"; failures=$((failures + 1)); }

# 0. the quick loop: every suite make check names is a suite of the tests (a renamed suite would drop
#    out of it silently), and what its tests run is installed. Its tests themselves ran above, with the
#    rest; how long make check takes is make bench's to measure.
# (From the test bundle itself: `swift test list` would wait on the build folder's lock, which the
# background work of make test may hold.)
bundle=${TEST_BUNDLE:-.build/debug/chimePackageTests.xctest}
listed=$({ "$bundle" --list-tests; "$bundle" --testing-library swift-testing --list-tests; } 2>/dev/null || true)
check_suites=$(make --no-print-directory -s check-suites)
missing=()
for suite in $check_suites; do
    grep -Eq "(^|\.)${suite}(/|\.)" <<<"$listed" || missing+=("$suite")
done
if [ ${#missing[@]} -eq 0 ] && make --no-print-directory -s deps-check >/dev/null 2>&1; then
    pass "make check: its $(wc -w <<<"$check_suites") suites are all in the tests, and what they run is installed"
else
    fail "make check names suites the tests do not have: ${missing[*]:-none} (or deps-check failed)"
fi

# 1. install and uninstall in a scratch prefix (real paths: the activation test below uses them).
prefix=$scratch/prefix
# PIE=1 as make deb builds, so the package below reuses this build instead of relinking.
make --no-print-directory install PIE=1 PREFIX="$prefix" NOTIFY_SEND_LINK=1 >"$scratch/install.log" 2>&1 || { cat "$scratch/install.log"; exit 1; }
[ "$(readlink "$prefix/bin/notify-send")" = chime ] && "$prefix/bin/notify-send" --version | grep -q '^.*notify-send 0.8.7 (chime ' \
    && pass "NOTIFY_SEND_LINK=1 installs notify-send, and it answers as notify-send" || fail "the notify-send link is missing or wrong"
for f in bin/chime libexec/chime/chime-commands lib/systemd/user/chime.service share/dbus-1/services/org.chime.Scheduler.service \
         share/dbus-1/interfaces/org.chime.Scheduler1.xml share/doc/chime/dbus-interface.md \
         share/applications/chime.desktop share/icons/hicolor/scalable/apps/chime.svg share/man/man1/chime.1 \
         share/man/man1/chime-daemon.1 share/bash-completion/completions/chime share/zsh/site-functions/_chime \
         share/fish/vendor_completions.d/chime.fish share/doc/chime/examples/alarms.toml \
         bin/chime-alarms share/applications/org.chime.Alarms.desktop share/metainfo/org.chime.Alarms.metainfo.xml \
         share/icons/hicolor/scalable/apps/org.chime.Alarms.svg share/icons/hicolor/symbolic/apps/org.chime.Alarms-symbolic.svg \
         share/man/man1/chime-alarms.1 share/locale/de/LC_MESSAGES/chime.mo libexec/chime/chime-eds; do
    [ -f "$prefix/$f" ] || fail "make install did not install $f"
done
grep -qx "Exec=$prefix/bin/chime daemon" "$prefix/share/dbus-1/services/org.chime.Scheduler.service" \
    && pass "the D-Bus service file names the installed binary" || fail "the D-Bus service file's Exec= is wrong"

# 2. the unit file and the desktop entry.
runtime=$scratch/runtime && mkdir -m 700 "$runtime"
# (verify also looks up the man pages the unit's Documentation= names.)
# What systemd-analyze says of a unit that cannot be wrong is about this machine's other user units
# (several notification servers installed claim the same bus name): only what it says beyond that
# is about chime.service.
printf '[Unit]\nDescription=baseline\n[Service]\nExecStart=/bin/true\n' >"$scratch/baseline.service"
baseline=$(XDG_RUNTIME_DIR=$runtime systemd-analyze verify --user --man=no "$scratch/baseline.service" 2>&1 || true)
if verify=$(MANPATH=$prefix/share/man: XDG_RUNTIME_DIR=$runtime systemd-analyze verify --user "$prefix/lib/systemd/user/chime.service" 2>&1 \
        | grep -vxF -f <(printf '%s\n' "$baseline" | grep -v '^$') || true) \
    && [ -z "$verify" ]; then
    pass "systemd-analyze verify --user accepts chime.service"
else
    fail "systemd-analyze verify: $verify"
fi
for entry in chime.desktop org.chime.Alarms.desktop; do
    if out=$(desktop-file-validate "$prefix/share/applications/$entry" 2>&1) && [ -z "$out" ]; then
        pass "desktop-file-validate accepts $entry"
    else
        fail "desktop-file-validate $entry: $out"
    fi
done
if out=$(appstreamcli validate --no-net "$prefix/share/metainfo/org.chime.Alarms.metainfo.xml" 2>&1); then
    pass "appstreamcli validate accepts the app's metainfo"
else
    fail "appstreamcli validate: $out"
fi
grep -q '^Name\[de\]=' "$prefix/share/applications/org.chime.Alarms.desktop" && grep -q 'xml:lang="de"' "$prefix/share/metainfo/org.chime.Alarms.metainfo.xml" \
    && pass "the app's desktop entry and metainfo carry the German translation" || fail "no German in the app's desktop entry or metainfo"

# 3. bash completion: loads without errors, completes subcommands and options.
completion=$(bash -c 'set -e; source /usr/share/bash-completion/bash_completion; source "$1" 2>&1
    COMP_WORDS=(chime ""); COMP_CWORD=1; COMP_LINE="chime "; COMP_POINT=6; _chime chime "" chime
    echo "${COMPREPLY[*]}"
    COMP_WORDS=(chime daemon --); COMP_CWORD=2; COMP_LINE="chime daemon --"; COMP_POINT=15; COMPREPLY=()
    _chime chime -- daemon; echo "${COMPREPLY[*]}"' _ "$prefix/share/bash-completion/completions/chime" 2>&1)
if grep -q "notify" <<<"$completion" && grep -q "daemon" <<<"$completion" && grep -q -- "--no-config" <<<"$completion"; then
    pass "bash completes chime's subcommands and options"
else
    fail "bash completion: $completion"
fi

# 4. D-Bus activation through the installed service directory.
home=$scratch/home && mkdir -p "$home"
cat >"$scratch/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:path=$scratch/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$prefix/share/dbus-1/services</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
env -i PATH="$PATH" HOME="$home" dbus-daemon --config-file="$scratch/bus.conf" --nofork 2>"$scratch/bus.log" &
pids+=($!)
for _ in $(seq 600); do [ -S "$scratch/bus" ] && break; sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS=unix:path=$scratch/bus
if out=$(HOME=$home "$prefix/bin/chime" list 2>&1) && [ "$out" = "no pending alarms" ]; then
    owner=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetConnectionUnixProcessID string:org.chime.Scheduler | awk '/uint32/ {print $2}')
    # `chime daemon` is run by chime-commands, which chime hands it to in the same process.
    if [ -n "$owner" ] && [ "$(readlink "/proc/$owner/exe")" = "$prefix/libexec/chime/chime-commands" ]; then
        pids+=("$owner")
        pass "chime list started the installed daemon by D-Bus activation (pid $owner, chime handing over to chime-commands)"
    else
        fail "D-Bus activation: no daemon from $prefix/libexec/chime owns org.chime.Scheduler"
    fi
else
    fail "D-Bus activation: chime list said: $out"
fi
unset DBUS_SESSION_BUS_ADDRESS
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
pids=()

# 4b. Waking as documented, as a user who is not root (nobody), on a bus of that user's: the file
#     capability the daemon advises goes on the program that runs it (chime-commands; chime hands
#     `chime daemon` to it by exec, and a capability on chime does not cross that exec), and works
#     for a daemon started by hand and by D-Bus activation; under NoNewPrivileges only ambient
#     capabilities (a unit's AmbientCapabilities=) do, and the advice says so.
as_user=(setpriv --reuid 65534 --regid 65534 --clear-groups)
wake=$scratch/wake && mkdir -p "$wake/home" && chown -R 65534:65534 "$wake"
chmod 755 "$scratch"
commands=$prefix/libexec/chime/chime-commands
sed -e "s|unix:path=$scratch/bus|unix:path=$wake/bus|" "$scratch/bus.conf" >"$wake/bus.conf" && chmod 644 "$wake/bus.conf"
start_user_bus() {
    rm -f "$wake/bus"
    "${as_user[@]}" env -i PATH="$PATH" HOME="$wake/home" dbus-daemon --config-file="$wake/bus.conf" --nofork 2>>"$scratch/bus.log" &
    bus_pid=$!
    for _ in $(seq 600); do [ -S "$wake/bus" ] && break; sleep 0.05; done
}
daemon_pid() {  # asked as that user: the bus takes connections from its own user only
    user_chime dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.chime.Scheduler 2>/dev/null | awk '/uint32/ {print $2}' || true
}
stop_user_bus() {  # the daemon the bus or the test started, then the bus, by PID
    local owner
    owner=$(daemon_pid)
    [ -n "$owner" ] && kill "$owner" 2>/dev/null && while kill -0 "$owner" 2>/dev/null; do sleep 0.05; done
    kill "$bus_pid" 2>/dev/null; wait "$bus_pid" 2>/dev/null || true
    rm -rf "$wake/home/.local"
}
user_chime() { "${as_user[@]}" env -i PATH="$PATH" HOME="$wake/home" DBUS_SESSION_BUS_ADDRESS=unix:path=$wake/bus "$@"; }
wake_method() {  # waits for the daemon to answer, then says its wake method
    local out
    # (status exits 69 here, where no notification server runs: the answer is what counts)
    for _ in $(seq 600); do
        out=$(user_chime "$prefix/bin/chime" status --json 2>/dev/null || true)
        grep -q '"wakeMethod"' <<<"$out" && break
        sleep 0.05
    done
    grep -o '"wakeMethod":"[a-z]*"' <<<"$out" | cut -d'"' -f4
}
user_daemon() {  # chime daemon started by hand as that user (setpriv options before it)
    "${as_user[@]}" "$@" env -i PATH="$PATH" HOME="$wake/home" DBUS_SESSION_BUS_ADDRESS=unix:path=$wake/bus \
        "$prefix/bin/chime" daemon --no-config 2>>"$scratch/daemon.log" &
}
# With no capability anywhere, the advice names chime-commands.
start_user_bus; user_daemon
method=$(wake_method)
advice=$(user_chime "$prefix/bin/chime" status 2>&1 | grep '^Wake:' || true)
[ "$method" = none ] && grep -qF "setcap cap_wake_alarm+ep $commands" <<<"$advice" \
    && pass "without the capability, chime status advises setcap on $commands" || fail "the waking advice: $advice"
stop_user_bus
# A capability on chime alone does not reach the daemon (the exec to chime-commands drops it).
setcap cap_wake_alarm+ep "$prefix/bin/chime"
start_user_bus; user_daemon
[ "$(wake_method)" = none ] && pass "a capability on chime alone does not reach the daemon, as the advice says" \
    || fail "a capability on chime reached the daemon: the advice would be needless"
stop_user_bus
setcap -r "$prefix/bin/chime"
# The advice followed: by hand, and by D-Bus activation.
setcap cap_wake_alarm+ep "$commands"
start_user_bus; user_daemon
[ "$(wake_method)" = kernel ] && pass "setcap on chime-commands, as advised: chime daemon started by hand wakes by the kernel's RTC alarm" \
    || fail "setcap on chime-commands: the daemon started by hand still cannot wake ($(user_chime "$prefix/bin/chime" status 2>&1 | grep '^Wake:'))"
stop_user_bus
start_user_bus
user_chime "$prefix/bin/chime" list >/dev/null 2>&1 || true
[ "$(wake_method)" = kernel ] && pass "setcap on chime-commands, as advised: the daemon started by D-Bus activation wakes too" \
    || fail "setcap on chime-commands: the D-Bus-activated daemon cannot wake"
stop_user_bus
# As chime.service runs it (NoNewPrivileges=yes): the file capability is not honoured, and the advice
# is the unit's; with the capability ambient (what AmbientCapabilities= gives), the daemon has it.
start_user_bus; user_daemon --no-new-privs
method=$(wake_method)
advice=$(user_chime "$prefix/bin/chime" status 2>&1 | grep '^Wake:' || true)
[ "$method" = none ] && grep -q "AmbientCapabilities=CAP_WAKE_ALARM in a drop-in" <<<"$advice" && grep -q "never honoured under NoNewPrivileges" <<<"$advice" \
    && pass "under NoNewPrivileges the file capability is not honoured, and the advice is the unit's AmbientCapabilities=" \
    || fail "under NoNewPrivileges: $advice"
stop_user_bus
setcap -r "$commands"
start_user_bus; user_daemon --no-new-privs --inh-caps +wake_alarm --ambient-caps +wake_alarm
[ "$(wake_method)" = kernel ] && pass "with the capability ambient, as AmbientCapabilities= gives it under NoNewPrivileges, the daemon wakes" \
    || fail "an ambient CAP_WAKE_ALARM did not reach the daemon"
# It keeps the capability to itself: nothing it starts inherits it (its ambient set is empty).
ambient=$(awk '/^CapAmb:/ {print $2}' "/proc/$(daemon_pid)/status")
[ "$ambient" = 0000000000000000 ] && pass "the daemon clears its ambient capabilities: the programs it starts inherit none" \
    || fail "the daemon's ambient capabilities are $ambient: its players and body commands would inherit them"
stop_user_bus

make --no-print-directory uninstall PIE=1 PREFIX="$prefix" >/dev/null
left=$(find "$prefix" -type f -o -type l)
[ -z "$left" ] && pass "make uninstall removed every installed file" || fail "make uninstall left: $left"

# 5. the Debian packages, installed and purged for real.
if dpkg -s chime >/dev/null 2>&1 || dpkg -s chime-alarms >/dev/null 2>&1 || dpkg -s chime-eds >/dev/null 2>&1; then
    fail "a chime package is already installed here; remove it to run the package test"
else
    debs=$(make --no-print-directory deb 2>"$scratch/deb.log" | grep '\.deb$') || { cat "$scratch/deb.log"; fail "make deb failed"; debs=""; }
    deb=$(grep '/chime_' <<<"$debs" || true)
    app_deb=$(grep '/chime-alarms_' <<<"$debs" || true)
    eds_deb=$(grep '/chime-eds_' <<<"$debs" || true)
    if [ -n "$deb" ] && [ -f "$deb" ] && [ -n "$app_deb" ] && [ -f "$app_deb" ] && [ -n "$eds_deb" ] && [ -f "$eds_deb" ]; then
        pass "make deb built $deb, $app_deb and $eds_deb (lintian: no errors)"
        # libecal and GLib come with chime-eds alone.
        if ! dpkg-deb -f "$deb" Depends | grep -qE 'libecal|libglib' && dpkg-deb -f "$eds_deb" Depends | grep -q 'libecal-2.0' \
            && dpkg-deb -f "$eds_deb" Depends | grep -q "chime (= $version)"; then
            pass "chime depends on no libecal; chime-eds on libecal and chime (= $version)"
        else
            fail "chime-eds's dependencies: chime: $(dpkg-deb -f "$deb" Depends); chime-eds: $(dpkg-deb -f "$eds_deb" Depends)"
        fi
        # libdbus is linked in (STATIC_DBUS=1): no libdbus dependency, and Built-Using names its source.
        # chime opens libpulse and libsndfile itself (dlopen): recommended, never a dependency.
        if dpkg-deb -f "$deb" Recommends | grep -q 'libpulse0' && ! dpkg-deb -f "$deb" Depends | grep -q 'libpulse'; then
            pass "the package recommends libpulse0 and libsndfile1 (opened at the first sound) and does not depend on them"
        else
            fail "the package's Recommends/Depends for the sound libraries: $(dpkg-deb -f "$deb" Depends Recommends)"
        fi
        if ! dpkg-deb -f "$deb" Depends | grep -q libdbus && dpkg-deb -f "$deb" Built-Using | grep -q '^dbus (= '; then
            pass "the package links libdbus in and says Built-Using: $(dpkg-deb -f "$deb" Built-Using)"
        else
            fail "the package's Depends/Built-Using do not match a static libdbus: $(dpkg-deb -f "$deb" Depends Built-Using)"
        fi
        # The command line never pulls in GTK; the app needs chime of its own version.
        if ! dpkg-deb -f "$deb" Depends | grep -qE 'gtk|adwaita' && dpkg-deb -f "$app_deb" Depends | grep -q 'libgtk-4-1' \
            && dpkg-deb -f "$app_deb" Depends | grep -q "chime (= $version)"; then
            pass "chime depends on no GTK; chime-alarms on GTK 4, libadwaita and chime (= $version)"
        else
            fail "the packages' dependencies: chime: $(dpkg-deb -f "$deb" Depends); chime-alarms: $(dpkg-deb -f "$app_deb" Depends)"
        fi
        dpkg -i "$deb" "$app_deb" "$eds_deb" >"$scratch/dpkg.log" 2>&1 || { cat "$scratch/dpkg.log"; fail "dpkg -i failed"; }
        # The daemon finds it beside chime-commands; without arguments it says how it is used (exit 2).
        eds_usage=$(/usr/libexec/chime/chime-eds 2>&1 || true)
        grep -q '^usage: chime-eds' <<<"$eds_usage" && pass "/usr/libexec/chime/chime-eds runs" \
            || fail "/usr/libexec/chime/chime-eds did not run: $eds_usage"
        [ "$(/usr/bin/chime --version)" = "chime $version" ] && pass "/usr/bin/chime --version says chime $version" \
            || fail "/usr/bin/chime --version said $(/usr/bin/chime --version)"
        # Every command but notify runs in /usr/libexec/chime/chime-commands.
        /usr/bin/chime next "16:35" --after "2026-11-20 17:00" --tz UTC --count 1 | grep -q '^Sat 2026-11-21 16:35:00 UTC' \
            && pass "/usr/bin/chime hands chime next to the installed chime-commands" \
            || fail "/usr/bin/chime next did not answer from the installed chime-commands"
        [ "$(/usr/bin/chime-alarms --version)" = "chime-alarms $version" ] && pass "/usr/bin/chime-alarms --version says chime-alarms $version" \
            || fail "/usr/bin/chime-alarms --version said $(/usr/bin/chime-alarms --version 2>&1)"
        if man -w chime >/dev/null 2>&1 && MANPAGER=cat man chime-daemon 2>/dev/null | grep -q "alarm scheduler" \
            && MANPAGER=cat man chime-alarms 2>/dev/null | grep -q "alarms and timers in a window"; then
            pass "man chime, man chime-daemon and man chime-alarms find the installed pages"
        else
            fail "man cannot find chime's pages"
        fi
        files=$(dpkg -L chime chime-alarms chime-eds | while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done)
        dpkg --purge chime-eds chime-alarms chime >>"$scratch/dpkg.log" 2>&1 || fail "dpkg --purge failed"
        left=$(for f in $files; do if [ -e "$f" ]; then echo "$f"; fi; done)
        [ -z "$left" ] && pass "dpkg --purge removed all $(wc -w <<<"$files") files" || fail "purge left: $left"
        if dpkg -s chime >/dev/null 2>&1 || dpkg -s chime-alarms >/dev/null 2>&1 || dpkg -s chime-eds >/dev/null 2>&1; then
            fail "a chime package is still installed after purge"
        fi
    else
        fail "make deb did not build the three packages: $debs"
    fi
fi

if [ "$failures" -gt 0 ]; then
    echo "packaging tests: $failures failed"
    exit 1
fi
echo "packaging tests: all passed"
