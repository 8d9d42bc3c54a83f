#!/usr/bin/python3
"""chime on every desktop's notification server: the compatibility matrix.

For each server Debian packages, starts it the way its desktop does (under Xvfb, or a headless
sway for the Wayland-only ones) on a private session bus, then runs chime's whole path against
it: `chime notify` with actions and --wait, replace, close, expiry, an image, a sound hint, markup,
two identical notifications in a row; a daemon alarm with Snooze and Dismiss that expires; and
`chime status`. Every message on the bus is recorded (busctl monitor), so each row of the matrix
is what the server did on the wire, not what its documentation says.

Writes DIR/NAME.json, DIR/NAME.png (a chime alarm on that server) and DIR/SERVERS.md (the table),
and exits 1 when chime failed a check on any server that ran. Must not run as root (sway refuses
to); scripts/test-desktops.sh drops to an unprivileged user.

    matrix.py --chime PATH --out DIR [SERVER ...]
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGING = os.path.join(HERE, "..", "packaging") if os.path.exists(os.path.join(HERE, "..", "packaging")) else os.path.join(HERE, "..", "..", "packaging")
ICON = os.path.join(PACKAGING, "chime.svg")


sys.path.insert(0, os.path.join(HERE, ".."))
import testdesktop  # noqa: E402


class Session:
    """The one test desktop (scripts/testdesktop.py) and whatever a server needs around it: its buses,
    display and accessibility bus come from the harness; every process is stopped by PID."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"chime-{name}-")
        env = {k: v for k, v in os.environ.items() if k != "DBUS_SYSTEM_BUS_ADDRESS"}
        env.update(HOME=self.dir, XDG_RUNTIME_DIR=os.path.join(self.dir, "run"),
                   XDG_CONFIG_HOME=os.path.join(self.dir, "config"), XDG_DATA_HOME=os.path.join(self.dir, "data"),
                   XDG_STATE_HOME=os.path.join(self.dir, "state"), XDG_CACHE_HOME=os.path.join(self.dir, "cache"),
                   NO_AT_BRIDGE="0", GTK_A11Y="atspi", QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", QT_ACCESSIBILITY="1",
                   GSETTINGS_BACKEND="memory", LC_ALL="C.UTF-8")
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        # Nothing of it yet: each server's start adds the parts it needs.
        self.desktop = testdesktop.Desktop(bus=False, env=env, directory=os.path.join(self.dir, "desktop")).start()
        self.env = self.desktop.env
        self.log = self.desktop.log

    def spawn(self, argv, **kw):
        return self.desktop.spawn(None, argv, env=self.env, **kw)

    def stop(self):
        self.desktop.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def bus(self, kind="session"):
        self.desktop.add_bus(kind)
        return self.env["DBUS_SYSTEM_BUS_ADDRESS" if kind == "system" else "DBUS_SESSION_BUS_ADDRESS"]

    def xvfb(self):
        self.desktop.add_display("1280x800")
        self.screenshot = lambda path: subprocess.run(["import", "-window", "root", path], env=self.env, check=True)

    def sway(self):
        conf = os.path.join(self.dir, "sway.conf")
        with open(conf, "w") as f:
            f.write("output HEADLESS-1 resolution 1280x800\n")
        self.env.update(WLR_BACKENDS="headless", WLR_LIBINPUT_NO_DEVICES="1", WLR_RENDERER="pixman")
        self.spawn(["sway", "-c", conf])
        run = self.env["XDG_RUNTIME_DIR"]
        until(lambda: any(n.startswith("wayland-") and not n.endswith(".lock") for n in os.listdir(run)), 10, "sway's socket")
        self.env["WAYLAND_DISPLAY"] = next(n for n in os.listdir(run) if n.startswith("wayland-") and not n.endswith(".lock"))
        self.screenshot = lambda path: subprocess.run(["grim", path], env=self.env, check=True)

    def accessibility(self):
        """The accessibility bus, so a test can find an action's button and click it like a user."""
        self.desktop.add_accessibility()
        # Qt bridges to AT-SPI only when accessibility is on.
        subprocess.run(["gdbus", "call", "--session", "-d", "org.a11y.Bus", "-o", "/org/a11y/bus", "-m",
                        "org.freedesktop.DBus.Properties.Set", "org.a11y.Status", "IsEnabled", "<true>"],
                       env=self.env, capture_output=True)

    def call(self, dest, path, iface, method, *args, quiet=False):
        r = subprocess.run(["gdbus", "call", "--session", "-d", dest, "-o", path, "-m", f"{iface}.{method}", *args],
                           env=self.env, capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            if quiet:
                return None
            raise RuntimeError(r.stderr.strip())
        return r.stdout.strip()

    def chime(self, *args, timeout=30):
        started = time.monotonic()
        r = subprocess.run([CHIME, *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout.strip(), r.stderr.strip(), time.monotonic() - started


def until(check, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{what} did not come within {seconds} s")


class Monitor:
    """Every Notifications message on the bus, from busctl monitor (which also sees unicast signals)."""

    def __init__(self, session):
        self.messages = []
        self.lock = threading.Lock()
        self.proc = session.spawn(["busctl", f"--address={session.env['DBUS_SESSION_BUS_ADDRESS']}", "--json=short", "monitor"],
                                  stdout=subprocess.PIPE)
        threading.Thread(target=self.read, daemon=True).start()
        time.sleep(0.3)

    def read(self):
        for line in self.proc.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            m["seen"] = time.monotonic()
            with self.lock:
                self.messages.append(m)

    def signals(self, member, since=0.0):
        with self.lock:
            return [m["payload"]["data"] for m in self.messages
                    if m.get("type") == "signal" and m.get("member") == member
                    and m.get("interface") == "org.freedesktop.Notifications" and m["seen"] >= since]

    def closed(self, nid, since=0.0):
        return [reason for (i, reason) in self.signals("NotificationClosed", since) if i == nid]

    def notify_results(self, since=0.0, summary=None):
        """Each Notify call since `since` (with that summary) and its answer: (arguments, id, error name)."""
        with self.lock:
            calls = [m for m in self.messages if m.get("type") == "method_call" and m.get("member") == "Notify"
                     and m["seen"] >= since and (summary is None or m["payload"]["data"][3] == summary)]
            answers = {(m.get("destination"), m.get("reply_cookie")): m for m in self.messages
                       if m.get("type") in ("method_return", "error")}
        results = []
        for c in calls:
            a = answers.get((c.get("sender"), c.get("cookie")))
            if a is None:
                continue
            if a["type"] == "error":
                results.append((c["payload"]["data"], None, a.get("error_name")))
            else:
                results.append((c["payload"]["data"], a["payload"]["data"][0], None))
        return results


# How each server is started, and how a test presses an action button on it like a user would.
def start_x11(command, presser="atspi"):
    def start(s):
        s.xvfb()
        s.accessibility()
        s.spawn(command)
        return presser
    return start


def start_dunst(s):
    s.xvfb()
    # dunst offers a notification's actions through its context menu, which runs a dmenu-like
    # program: this one picks the action whose label the test asked for.
    pick = os.path.join(s.dir, "pick-action")
    with open(pick, "w") as f:
        f.write('#!/bin/sh\ngrep -i -m1 "$(cat "$HOME/press")"\n')
    os.chmod(pick, 0o755)
    conf = os.path.join(s.dir, "dunstrc")
    with open(conf, "w") as f:
        f.write(testdesktop.DUNSTRC.replace("dmenu = /bin/true", f"dmenu = {pick}"))
    s.desktop.start_dunst(conf)
    return "dunst"


def start_gnome(s):
    # The shell exposes its widgets to AT-SPI only with this setting on (as a screen reader turns it on).
    s.env["GSETTINGS_BACKEND"] = "keyfile"
    keyfile = os.path.join(s.env["XDG_CONFIG_HOME"], "glib-2.0", "settings", "keyfile")
    os.makedirs(os.path.dirname(keyfile), exist_ok=True)
    with open(keyfile, "w") as f:
        f.write("[org/gnome/desktop/interface]\ntoolkit-accessibility=true\n")
    # GNOME Shell asks logind for the session and sleep state: a stand-in on a private system bus.
    s.bus("system")
    s.spawn(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "logind"])
    s.xvfb()
    s.accessibility()
    s.spawn(["gnome-shell", "--x11"])
    until(lambda: s.call("org.gnome.Shell", "/org/gnome/Shell", "org.freedesktop.DBus.Peer", "Ping", quiet=True), 60, "GNOME Shell")
    # The shell's notification service, which a GNOME session starts through D-Bus activation.
    s.spawn(["gjs", "/usr/share/gnome-shell/org.gnome.Shell.Notifications"])
    # A session starts in the overview with the shell's own banner up (no screen lock without
    # GDM): leave the overview as a user would, and let that banner go.
    time.sleep(2)
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "press.py"), "--key", "Escape"], env=s.env, capture_output=True)
    time.sleep(5)
    return "atspi"


def start_plasma(s):
    s.xvfb()
    s.accessibility()
    s.spawn(["/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd"])
    until(lambda: s.call("org.kde.ActivityManager", "/ActivityManager", "org.freedesktop.DBus.Peer", "Ping", quiet=True), 30,
          "kactivitymanagerd")
    s.spawn(["plasmashell", "--no-respawn"])
    return "atspi"


def start_phosh(s):
    """Phosh in phoc, on wlroots' X11 backend inside Xvfb (the headless backend has no keyboard seat,
    and phosh crashes without one), a phone's 360x720 at scale 2, its lock screen up (-L): where a
    phone's alarm is met. chime's desktop entry and icon are installed in the session's data
    folder, as `make install` puts them; GLib finds an entry only where its Exec is on PATH."""
    data = s.env["XDG_DATA_HOME"]
    os.makedirs(os.path.join(data, "applications"), exist_ok=True)
    shutil.copy(os.path.join(PACKAGING, "chime.desktop"), os.path.join(data, "applications"))
    icons = os.path.join(data, "icons", "hicolor", "scalable", "apps")
    os.makedirs(icons, exist_ok=True)
    shutil.copy(ICON, icons)
    s.env["PATH"] = os.path.dirname(CHIME) + ":" + s.env.get("PATH", "/usr/bin:/bin")
    s.desktop.add_display("1080x1600")
    s.accessibility()
    conf = os.path.join(s.dir, "phoc.ini")
    with open(conf, "w") as f:
        f.write("[output:X11-1]\nmode = 720x1440\nscale = 2\n")
    s.env.update(WLR_BACKENDS="x11", WLR_RENDERER="pixman", )
    s.spawn(["phoc", "-C", conf, "-E", "/usr/libexec/phosh -L"])
    run = s.env["XDG_RUNTIME_DIR"]
    until(lambda: any(n.startswith("wayland-") and not n.endswith(".lock") for n in os.listdir(run)), 20, "phoc's socket")
    s.env["WAYLAND_DISPLAY"] = next(n for n in os.listdir(run) if n.startswith("wayland-") and not n.endswith(".lock"))
    s.screenshot = lambda path: subprocess.run(["grim", path], env=s.env, check=True)
    return "atspi-action"


def start_wayland(command, presser=None):
    def start(s):
        s.sway()
        s.spawn(command)
        return presser
    return start


SERVERS = {
    "dunst": ("dunst", start_dunst),
    "notification-daemon": ("notification-daemon", start_x11(["/usr/lib/notification-daemon/notification-daemon"])),
    "xfce4-notifyd": ("xfce4-notifyd", start_x11(["/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd"])),
    "mate-notification-daemon": ("mate-notification-daemon",
                                 start_x11(["/usr/lib/mate-notification-daemon/mate-notification-daemon"])),
    "lxqt-notificationd": ("lxqt-notificationd", start_x11(["lxqt-notificationd"])),
    "mako": ("mako-notifier", start_wayland(["mako"], presser="mako")),
    "swaync": ("sway-notification-center", start_wayland(["swaync"])),
    "gnome-shell": ("gnome-shell", start_gnome),
    "plasma": ("plasma-workspace", start_plasma),
    "phosh": ("phosh", start_phosh),
}


def press(s, presser, label, nid):
    """Presses the action button labelled `label` the way a user would; False where no way is known."""
    if presser == "mako":
        return subprocess.run(["makoctl", "invoke", "-n", str(nid), label.lower()], env=s.env, capture_output=True).returncode == 0
    if presser == "dunst":
        with open(os.path.join(s.dir, "press"), "w") as f:
            f.write(label)
        return subprocess.run(["dunstctl", "context"], env=s.env, capture_output=True).returncode == 0
    if presser in ("atspi", "atspi-action"):
        # (On Wayland a window does not know where it is on screen: its button's own action is done.)
        r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "press.py")] + (["--action"] if presser == "atspi-action" else []) + [label],
                           env=s.env, capture_output=True, text=True, timeout=60)
        return r.returncode == 0
    return False


def run_matrix(name, package, start):
    s = Session(name)
    row = {"server": name, "package": package, "checks": {}, "failures": []}
    row["packageVersion"] = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True).stdout
    checks = row["checks"]

    def check(key, ok, observed):
        checks[key] = {"ok": bool(ok), "observed": observed}
        if not ok:
            row["failures"].append(f"{key}: {observed}")

    try:
        s.bus()
        monitor = Monitor(s)
        presser = start(s)
        until(lambda: s.chime("server-info")[0] == 0, 90, f"{name} on the bus")
        info = s.call("org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                      "GetServerInformation")
        caps = s.call("org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                      "GetCapabilities")
        row["serverInformation"] = info
        row["capabilities"] = sorted(json.loads(caps[1:-2].replace("'", '"')))
        # chime's table: NAME HAS MEANING, one capability a line.
        code, out, err, _ = s.chime("capabilities")
        listed = sorted(line.split()[0] for line in out.splitlines()[1:] if line.split()[1:2] == ["yes"])
        check("capabilities", code == 0 and listed == row["capabilities"], f"chime lists {listed}; the server says {row['capabilities']}")

        # Basic, replace, close.
        code, out, err, _ = s.chime("notify", "-p", "chime: hello", "from the compatibility matrix")
        check("notify", code == 0 and out.isdigit(), out or err)
        nid = int(out) if out.isdigit() else 0
        code, out, err, _ = s.chime("notify", "-p", "-r", str(nid), "chime: replaced", "the same popup, new text")
        check("replace", code == 0 and out == str(nid), f"asked to replace {nid}, got {out or err}")
        t = time.monotonic()
        code, out, err, _ = s.chime("notify", "--close", str(nid))
        time.sleep(1.0)
        check("close", code == 0 and 3 in monitor.closed(nid, t), f"exit {code}, NotificationClosed reasons {monitor.closed(nid, t)} {err}")

        # Expiry: does the server take a 1.5 s popup down by itself?
        t = time.monotonic()
        code, out, err, _ = s.chime("notify", "-p", "-t", "1500", "chime: expires", "in 1.5 s")
        eid = int(out) if out.isdigit() else 0
        until_or_none(lambda: monitor.closed(eid, t), 6)
        reasons = monitor.closed(eid, t)
        row["expiryHonoured"] = 1 in reasons
        checks["expiry"] = {"ok": True, "observed": "closed after 1.5 s (reason 1)" if 1 in reasons else "left up"}
        if eid:
            s.chime("notify", "--close", str(eid))

        # Markup, an image, a sound hint: accepted, and sent as the spec says.
        code, out, err, _ = s.chime("notify", "-p", "chime: <b>markup</b>", "<i>italic</i> &amp; <u>underlined</u>")
        check("markup", code == 0, out or err)
        t = time.monotonic()
        code, out, err, _ = s.chime("notify", "-p", "-i", os.path.abspath(ICON), "chime: image", "an SVG icon by path")
        check("image", code == 0, out or err)
        code, out, err, _ = s.chime("notify", "-p", "-h", "string:sound-name:bell", "chime: sound", "the bell, by name")
        check("sound-hint", code == 0, out or err)

        # Two identical notifications in a row (Plasma refuses the second within a second).
        t = time.monotonic()
        first = s.chime("notify", "-p", "chime: twice", "the same text")
        second = s.chime("notify", "-p", "chime: twice", "the same text")
        refused = [error for (_, _, error) in monitor.notify_results(t) if error]
        check("duplicate", first[0] == 0 and second[0] == 0,
              f"exits {first[0]}, {second[0]}" + (f"; the server answered {refused[0]} once, chime sent it again" if refused else ""))
        row["refusesDuplicates"] = any("ExcessNotificationGeneration" in e for e in refused)

        # Take down what is still up (servers that never expire popups keep them), as a user would,
        # so the next popups are where a user would see them.
        for (_, left, _) in monitor.notify_results():
            if left and not monitor.closed(left):
                s.chime("notify", "--close", str(left))
        time.sleep(0.5)

        # Actions: --wait prints the action a user pressed.
        if "actions" in row["capabilities"]:
            t = time.monotonic()
            waiter = subprocess.Popen([CHIME, "notify", "-p", "-A", "snooze=Snooze", "-A", "dismiss=Dismiss", "--wait",
                                       "--wait-timeout", "40", "chime: actions", "press Snooze"],
                                      env=s.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = waiter.stdout.readline().strip()
            aid = int(line) if line.isdigit() else 0
            time.sleep(0.5)
            pressed = press(s, presser, "Snooze", aid)
            if not pressed:
                # No way to press here: Ctrl-C, which closes it (GNOME lets only the program that
                # showed a notification close it while that program runs).
                waiter.send_signal(signal.SIGINT)
            try:
                out, err = waiter.communicate(timeout=45)
            except subprocess.TimeoutExpired:
                waiter.kill()
                out, err = waiter.communicate()
            invoked = [k for (i, k) in monitor.signals("ActionInvoked", t) if i == aid]
            if pressed:
                check("actions", waiter.returncode == 0 and out.strip() == "snooze" and invoked == ["snooze"],
                      f"pressed Snooze: exit {waiter.returncode}, printed {out.strip()!r}, ActionInvoked {invoked} {err.strip()}")
            else:
                time.sleep(1)
                closed = monitor.closed(aid, t)
                check("actions", waiter.returncode == 130 and 3 in closed,
                      f"sent; not pressed here (no way to click on {name}); Ctrl-C: exit {waiter.returncode}, closed {closed}")
            row["actionsPressed"] = pressed
        else:
            code, out, err, _ = s.chime("notify", "-A", "snooze=Snooze", "chime: actions", "the server has none")
            check("actions", code == 2 and "does not support actions" in err, f"exit {code}: {err}")
            row["actionsPressed"] = False

        row.update(alarm(s, monitor, presser, name))
        for key, (ok, observed) in row.pop("alarmChecks").items():
            check(key, ok, observed)

    except Exception as e:  # the server did not start here: the row says why
        row["error"] = f"{type(e).__name__}: {e}"
        with open(os.path.join(s.dir, "desktop", "desktop.log")) as f:
            row["log"] = f.read()[-3000:]
    finally:
        s.stop()
    return row


def until_or_none(check, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def alarm(s, monitor, presser, name):
    """A daemon alarm, as a user meets it: it fires and is seen, Snooze reschedules it; an alarm the
    server leaves up past its expiry is taken down by chime."""
    results, checks = {}, {}
    daemon = s.spawn([CHIME, "daemon", "--no-config"])
    until(lambda: s.chime("list")[0] == 0, 15, "chime daemon")
    t = time.monotonic()
    code, out, err, _ = s.chime("in", "2s", "Tea is ready", "Snooze or Dismiss", "--id", "tea", "--snooze", "10m")
    until_or_none(lambda: monitor.notify_results(t, "Tea is ready"), 10)
    shown = monitor.notify_results(t, "Tea is ready")
    time.sleep(1.5)
    shot = os.path.join(OUT, f"{name}.png")
    try:
        s.screenshot(shot)
        results["screenshot"] = os.path.basename(shot)
    except (subprocess.CalledProcessError, OSError) as e:
        results["screenshot"] = None
        results["screenshotError"] = str(e)
    call, nid, error = shown[0] if shown else (None, None, None)
    checks["alarm-fires"] = (code == 0 and nid is not None, f"add exit {code} {err}; Notify answered {nid or error}")
    if call:
        results["alarmHints"] = {k: v["data"] for k, v in call[6].items() if k != "image-data"}
        results["alarmActions"] = call[5]
    if nid and call[5]:
        # Snooze, pressed like a user would: the alarm is pending again, ten minutes on.
        if press(s, presser, "Snooze", nid):
            # A snoozed one-off is pending again, due ten minutes after it was pressed.
            def snoozed_until():
                code, out, _, _ = s.chime("list", "--json")
                return [datetime.datetime.fromisoformat(a["nextFire"]).timestamp()
                        for a in json.loads(out or "[]") if a.get("id") == "tea" and a.get("nextFire")] if code == 0 else []
            pressed_at = time.time()
            until_or_none(snoozed_until, 10)
            due = snoozed_until()
            ok = len(due) == 1 and 9 * 60 <= due[0] - pressed_at <= 11 * 60
            checks["alarm-snooze"] = (ok, f"pressed Snooze: due again in {round(due[0] - pressed_at) if due else None} s")
            results["snoozePressed"] = True
        else:
            checks["alarm-snooze"] = (True, f"not pressed here (no way to click on {name})")
            results["snoozePressed"] = False
    # Expiry: an alarm that should go after 3 s; chime closes it if the server does not.
    t = time.monotonic()
    s.chime("in", "1s", "Short alarm", "--expire", "3s", "--id", "short")
    until_or_none(lambda: monitor.notify_results(t, "Short alarm"), 6)
    shown = monitor.notify_results(t, "Short alarm")
    sid = shown[0][1] if shown else None
    until_or_none(lambda: monitor.closed(sid, t), 10)
    reasons = monitor.closed(sid, t)
    checks["alarm-expiry"] = (bool(reasons), f"NotificationClosed reasons {reasons} (1: the server let it expire, 3: chime closed it)")
    results["alarmClosedBy"] = "server" if 1 in reasons else "chime" if 3 in reasons else "nobody"
    dnd = do_not_disturb(s, monitor, name)
    if dnd is not None:
        dnd_checks, dnd_results = dnd
        checks.update(dnd_checks)
        results.update(dnd_results)
    code, out, err, _ = s.chime("status")
    checks["status"] = (code == 0 and "Authorization:  authorized" in out and "Daemon:         running" in out, out or err)
    results["status"] = out
    daemon.terminate()
    daemon.wait(10)
    results["alarmChecks"] = checks
    return results


class PlasmaInhibition:
    """Plasma's do-not-disturb for as long as the inhibiting program runs (as a presentation app holds it)."""

    def __init__(self, s):
        code = ("import dbus, sys, time\n"
                "bus = dbus.SessionBus()\n"
                "n = bus.get_object('org.freedesktop.Notifications', '/org/freedesktop/Notifications')\n"
                "dbus.Interface(n, 'org.freedesktop.Notifications').Inhibit('chime-matrix', 'testing do-not-disturb', {})\n"
                "print('inhibited', flush=True)\n"
                "time.sleep(600)\n")
        self.proc = s.spawn(["/usr/bin/python3", "-c", code], stdout=subprocess.PIPE)
        self.proc.stdout.readline()

    def end(self):
        self.proc.terminate()
        self.proc.wait(5)


# How each server's own do-not-disturb switch is turned on and off, as its users do.
def dnd_switch(s, name):
    def run(*argv):
        subprocess.run(list(argv), env=s.env, capture_output=True, timeout=30)
    if name == "dunst":
        return lambda: run("dunstctl", "set-paused", "true"), lambda: run("dunstctl", "set-paused", "false")
    if name == "gnome-shell":
        return (lambda: run("gsettings", "set", "org.gnome.desktop.notifications", "show-banners", "false"),
                lambda: run("gsettings", "set", "org.gnome.desktop.notifications", "show-banners", "true"))
    if name == "swaync":
        return lambda: run("swaync-client", "--dnd-on"), lambda: run("swaync-client", "--dnd-off")
    if name == "mako":
        return lambda: run("makoctl", "mode", "-a", "do-not-disturb"), lambda: run("makoctl", "mode", "-r", "do-not-disturb")
    if name == "plasma":
        held = []
        return lambda: held.append(PlasmaInhibition(s)), lambda: held.pop().end()
    return None


def do_not_disturb(s, monitor, name):
    """The server's do-not-disturb, switched on and off with its own tool: chime status reads it; an
    alarm breaks through as critical, a deferred one waits and comes when it ends."""
    switch = dnd_switch(s, name)
    if switch is None:
        return None
    on, off = switch
    checks, results = {}, {}
    code, before, _, _ = s.chime("status")
    on()
    time.sleep(1)
    code, during, err, _ = s.chime("status")
    line = next((l for l in during.splitlines() if l.startswith("Do not disturb:")), "")
    checks["dnd-read"] = ("Do not disturb: on" in line and "Do not disturb: off" in before, line or err)
    results["dndStatus"] = line
    t = time.monotonic()
    s.chime("in", "1s", "Through", "--urgency", "normal", "--id", "through")
    s.chime("in", "1s", "Deferred", "--urgency", "normal", "--dnd", "defer", "--id", "deferred")
    until_or_none(lambda: monitor.notify_results(t, "Through"), 8)
    through = monitor.notify_results(t, "Through")
    urgency = through[0][0][6].get("urgency", {}).get("data") if through else None
    checks["dnd-break-through"] = (urgency == 2, f"sent with urgency {urgency}")
    time.sleep(2)
    checks["dnd-defer-waits"] = (not monitor.notify_results(t, "Deferred"), "not sent while do-not-disturb was on")
    ended = time.monotonic()
    off()
    # Servers that announce the change: at once; GNOME's setting is read again every 30 s.
    until_or_none(lambda: monitor.notify_results(ended, "Deferred"), 40)
    shown = monitor.notify_results(ended, "Deferred")
    with monitor.lock:
        seen = [m["seen"] for m in monitor.messages if m.get("type") == "method_call" and m.get("member") == "Notify"
                and m["seen"] >= ended and m["payload"]["data"][3] == "Deferred"]
    after = round(min(seen) - ended, 1) if seen else -1
    checks["dnd-defer-comes"] = (bool(shown) and "Late: due at" in shown[0][0][4] + shown[0][0][3],
                                 f"shown {after} s after do-not-disturb ended" if shown else "never shown")
    results["dndDeferredAfter"] = after
    return checks, results


def table(rows):
    """The server × behaviour table of docs/SERVERS.md, every cell from what this run saw."""
    lines = ["| Server (Debian package) | Spec | Capabilities | A 1.5 s popup | A critical alarm at its `--expire` "
             "| Snooze pressed | A repeat within 1 s | Do-not-disturb | chime's checks | What `chime status` says of it |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['server']} ({r.get('packageVersion', '')}) | | did not run here: `{r['error']}` | | | | | | | |")
            continue
        info = r["serverInformation"].strip("()").replace("'", "").split(", ")
        passed = sum(1 for c in r["checks"].values() if c["ok"])
        status = r.get("status", "")
        notes = status.split("This server:\n", 1)[1].split("\nDaemon:", 1)[0] if "This server:" in status else ""
        notes = "; ".join(line.strip() for line in notes.splitlines()) or "nothing to handle"
        closed = {"server": "closed by the server", "chime": "**left up**; chime closed it", "nobody": "**left up**"}
        dnd = r.get("dndStatus", "")
        dnd = (dnd.split(":", 1)[1].split(": alarms")[0].strip() + (f"; a deferred alarm came {r['dndDeferredAfter']} s after it ended"
                                                              if r.get("dndDeferredAfter", -1) >= 0 else "")) if dnd else "no switch chime reads"
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            f"{info[0]} {info[2]} ({r['package']} {r['packageVersion']})", info[3],
            ", ".join(f"`{c}`" for c in r["capabilities"]),
            "expired by the server" if r.get("expiryHonoured") else "**left up** (expire time ignored)",
            closed.get(r.get("alarmClosedBy", "nobody")),
            "yes: chime snoozed it" if r.get("snoozePressed") else "not automated here",
            "**refused**; chime resent it" if r.get("refusesDuplicates") else "shown", dnd.replace("|", "\\|"),
            f"{passed}/{len(r['checks'])}", notes.replace("|", "\\|")))
    return "\n".join(lines)


def main():
    global CHIME, OUT
    parser = argparse.ArgumentParser()
    parser.add_argument("--chime", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("servers", nargs="*")
    a = parser.parse_args()
    if os.geteuid() == 0:
        sys.exit("matrix.py: run as an unprivileged user (sway refuses root); scripts/test-desktops.sh does")
    CHIME, OUT = os.path.abspath(a.chime), os.path.abspath(a.out)
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for name in a.servers or list(SERVERS):
        package, start = SERVERS[name]
        started = time.monotonic()
        row = run_matrix(name, package, start)
        row["seconds"] = round(time.monotonic() - started, 1)
        rows.append(row)
        with open(os.path.join(OUT, f"{name}.json"), "w") as f:
            json.dump(row, f, indent=2)
        verdict = "did not run: " + row["error"] if "error" in row else \
            ("ok" if not row["failures"] else "FAILED: " + "; ".join(row["failures"]))
        print(f"{name:26} {row['seconds']:5.1f} s  {verdict}", flush=True)
    with open(os.path.join(OUT, "SERVERS.md"), "w") as f:
        f.write(table(rows) + "\n")
    sys.exit(1 if any(r.get("failures") for r in rows) else 0)


if __name__ == "__main__":
    main()
