#!/usr/bin/python3
"""A shared calendar of GNOME's followed through Evolution Data Server (issue 47): what it costs the
alarms beside it, and how soon a change made in GNOME Calendar is chime's.

A private session bus (scripts/testdesktop.py) where Debian's EDS is activated in a scratch home, a
notification server that only replies (bench/c/trivial_server.c); EVENTS weekly events (100,000 by
default), each with a reminder, are put into EDS's local "Personal" calendar at once (not measured).
The daemon then starts, its alarm file following `[[calendar]] eds = "Personal"`, and is measured:
  - answer: from its start to its first answer to Status;
  - plain alarm: one due about 4 s after the start (set by a daemon started before without the
    calendar), how late its Fired signal came;
  - all known: from the start to Status's pending count holding every event's alarm (chime-eds's
    first population of its folder, and the daemon's reading of it);
  - the longest answer to org.freedesktop.DBus.Peer.Ping (sent every 5 ms, answered by the daemon's
    loop) from the start until all are known: the longest the loop was held; and before, idle;
  - peak RSS (VmHWM) of the daemon and of chime-eds, its child;
  - a change: an event moved in EDS, as GNOME Calendar moves one (libecal, in this process): the time
    until the daemon's Get of its alarm says the new time (ROUNDS rounds: median and worst);
  - followed live: from the start until chime-eds has been through the calendar once (`chime
    status` says "followed live"), what it holds at most meanwhile;
  - a restart: the daemon stopped and started again, its folder in step: all known again (from its
    store), and followed live again.
Each wait is bounded (START_LIMIT seconds): what did not happen within it is reported as such.

    eds_calendar.py CHIME TRIVIAL_SERVER [EVENTS]     prints one JSON object
"""

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import testdesktop  # noqa: E402

import dbus  # noqa: E402
import dbus.mainloop.glib  # noqa: E402
import gi  # noqa: E402

gi.require_version("EDataServer", "1.2")
gi.require_version("ECal", "2.0")
gi.require_version("ICalGLib", "3.0")
from gi.repository import ECal, EDataServer, Gio, GLib, ICalGLib  # noqa: E402

CHIME, SERVER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
EVENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
START_LIMIT = float(os.environ.get("START_LIMIT", "600"))
ROUNDS = int(os.environ.get("EDS_ROUNDS", "5"))
NAME, PATH, IFACE = "org.chime.Scheduler", "/org/chime/Scheduler", "org.chime.Scheduler1"
EDS_SERVICES = ["org.gnome.evolution.dataserver.Sources5", "org.gnome.evolution.dataserver.Calendar8",
                "org.gnome.evolution.dataserver.UserPrompter0"]


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def event(i, hour=None):
    """A weekly event with a reminder 10 minutes before, as the tests' eds.py bulk writes them."""
    return ICalGLib.Component.new_from_string(
        f"BEGIN:VEVENT\r\nUID:bulk-{i}\r\nSUMMARY:Event {i}\r\n"
        f"DTSTART;TZID=Europe/Berlin:2027{1 + i % 12:02d}{1 + i % 28:02d}T{hour if hour is not None else 8 + i % 10:02d}0000\r\n"
        f"DURATION:PT30M\r\nRRULE:FREQ=WEEKLY\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Event {i}\r\n"
        f"TRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\n")


def main():
    work = tempfile.mkdtemp(prefix="chime-bench-eds-")
    home = os.path.join(work, "home")
    os.makedirs(home)
    scratch = dict(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), XDG_DATA_HOME=os.path.join(home, ".local/share"),
                   XDG_CACHE_HOME=os.path.join(home, ".cache"), XDG_STATE_HOME=os.path.join(home, ".local/state"),
                   XDG_RUNTIME_DIR=work, GSETTINGS_BACKEND="keyfile")
    # EDS's services as Debian installs them, each started in the scratch home.
    services = os.path.join(work, "services")
    os.makedirs(services)
    for name in EDS_SERVICES:
        with open(f"/usr/share/dbus-1/services/{name}.service") as f:
            text = f.read()
        prefix = "/usr/bin/env " + " ".join(f"{k}={v}" for k, v in sorted(scratch.items())) + " "
        with open(os.path.join(services, f"{name}.service"), "w") as f:
            f.write("\n".join("Exec=" + prefix + line[5:] if line.startswith("Exec=") else line for line in text.split("\n")))
    procs = []
    result = {"events": EVENTS}
    desktop = None
    try:
        desktop = testdesktop.Desktop(env=dict(os.environ, **scratch), services=services,
                                      directory=os.path.join(work, "desktop")).start()
        env = desktop.env
        log = open(os.path.join(work, "log"), "w")
        procs.append(subprocess.Popen([SERVER], env=env, stdout=log, stderr=log))
        os.environ.update(scratch)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = env["DBUS_SESSION_BUS_ADDRESS"]

        # (GIO's connection to this bus must not end this process when the bus stops at the end.)
        Gio.bus_get_sync(Gio.BusType.SESSION, None).set_exit_on_close(False)
        # The calendar, put into EDS in one call (as an import would).
        registry = EDataServer.SourceRegistry.new_sync(None)
        source = next(s for s in registry.list_sources(EDataServer.SOURCE_EXTENSION_CALENDAR) if s.get_display_name() == "Personal")
        client = ECal.Client.connect_sync(source, ECal.ClientSourceType.EVENTS, 0xFFFFFFFF, None)
        filled = time.monotonic()
        for start in range(0, EVENTS, 10_000):
            client.create_objects_sync([event(i) for i in range(start, min(EVENTS, start + 10_000))], ECal.OperationFlags.NONE, None)
        result["eds_fill_seconds"] = round(time.monotonic() - filled, 1)

        alarms = os.path.join(work, "alarms.toml")
        with open(alarms, "w") as f:
            f.write('[[calendar]]\neds = "Personal"\n')
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()
        fired = {}
        bus.add_signal_receiver(lambda i, due, t: fired.setdefault(str(i), (time.time(), int(due), str(t))),
                                signal_name="Fired", dbus_interface=IFACE)
        loop = GLib.MainLoop()
        threading.Thread(target=loop.run, daemon=True).start()
        state = os.path.join(work, "chime")

        def scheduler():
            return dbus.Interface(bus.get_object(NAME, PATH), IFACE)

        def answer(daemon, started, deadline):
            # (Status: ListPending of 100,000 alarms is one reply that holds the loop about a second,
            # which the pings would then count as the calendar's doing.)
            while time.monotonic() < deadline and daemon.poll() is None:
                try:
                    scheduler().Status(timeout=START_LIMIT)
                    return time.monotonic() - started
                except dbus.DBusException:
                    time.sleep(0.005)
            return None

        def pending():
            return int(scheduler().Status(timeout=START_LIMIT)["pending"])

        first = subprocess.Popen([CHIME, "daemon", "--no-config", "--state-dir", state], env=env, stderr=log)
        if answer(first, time.monotonic(), time.monotonic() + 30) is None:
            raise SystemExit("eds_calendar.py: the daemon did not start")
        plain_due = int(time.time()) + 4
        scheduler().Add(dbus.Dictionary({"title": "Plain", "id": "plain", "at": dbus.Int64(plain_due)}, signature="sv"))
        first.terminate()
        first.wait()

        # The loop's holds, from before the start until every alarm is known.
        longest = [0.0]
        pinging = threading.Event()

        def ping():
            while not pinging.is_set():
                t0 = time.monotonic()
                try:
                    dbus.Interface(bus.get_object(NAME, PATH), "org.freedesktop.DBus.Peer").Ping(timeout=START_LIMIT)
                    longest[0] = max(longest[0], time.monotonic() - t0)
                except dbus.DBusException:
                    pass  # (not running yet)
                time.sleep(0.005)

        def follow(started, daemon, key):
            """Waits until every alarm is known; the child's and the loop's peaks meanwhile."""
            child_peak = [0]
            watching = threading.Event()

            def watch():
                while not watching.is_set():
                    for child in children(daemon.pid):
                        try:
                            child_peak[0] = max(child_peak[0], vm(child, "VmHWM"))
                        except (OSError, StopIteration):
                            pass
                    time.sleep(0.05)

            threading.Thread(target=watch, daemon=True).start()
            known = None
            while time.monotonic() < started + START_LIMIT and daemon.poll() is None:
                try:
                    if pending() >= EVENTS:
                        known = time.monotonic() - started
                        break
                except dbus.DBusException:
                    pass
                time.sleep(0.05)
            # chime-eds's own first pass over the calendar: `chime status`'s "followed live".
            live = None
            while time.monotonic() < started + START_LIMIT and daemon.poll() is None:
                try:
                    if any("followed live" in str(line) for line in scheduler().AlarmFileStatus(timeout=START_LIMIT).get("calendars", [])):
                        live = time.monotonic() - started
                        break
                except dbus.DBusException:
                    pass
                time.sleep(0.05)
            watching.set()
            result[key + "_all_known_seconds"] = None if known is None else round(known, 2)
            result[key + "_followed_live_seconds"] = None if live is None else round(live, 2)
            result[key + "_child_peak_rss_mib"] = round(child_peak[0] / 1024, 1)
            return known

        started = time.monotonic()
        daemon = subprocess.Popen([CHIME, "daemon", "--config", alarms, "--state-dir", state], env=env, stderr=log)
        procs.append(daemon)
        result["plain_due_after_start_seconds"] = round(plain_due - time.time(), 2)
        pinger = threading.Thread(target=ping, daemon=True)
        pinger.start()
        result["answer_seconds"] = answer(daemon, started, started + START_LIMIT)
        known = follow(started, daemon, "first")
        result["first_longest_hold_ms"] = round(longest[0] * 1000, 1)
        while "plain" not in fired and time.time() < plain_due + 30:
            time.sleep(0.01)
        if "plain" in fired:
            arrival, due, timeliness = fired["plain"]
            result["plain_late_ms"] = round((arrival - due) * 1000, 1)
            result["plain_timeliness"] = timeliness

        # Changes, as GNOME Calendar makes them: an event moved to another hour; until the
        # daemon's request of its alarm says so.
        if known is not None:
            longest[0] = 0.0
            times = []
            for r in range(ROUNDS):
                i = (r * 7919) % EVENTS
                before = str(scheduler().Get(f"ics-bulk-{i}"))
                moved = event(i, hour=20 + r % 3)
                t0 = time.monotonic()
                client.modify_object_sync(moved, ECal.ObjModType.ALL, ECal.OperationFlags.NONE, None)
                committed = time.monotonic()
                while time.monotonic() < committed + 60:
                    if str(scheduler().Get(f"ics-bulk-{i}")) != before:
                        times.append(time.monotonic() - committed)
                        break
                    time.sleep(0.01)
                result.setdefault("change_commit_ms", []).append(round((committed - t0) * 1000, 1))
            if times:
                result["change_known_median_seconds"] = round(statistics.median(times), 3)
                result["change_known_worst_seconds"] = round(max(times), 3)
            result["change_rounds_known"] = f"{len(times)} of {ROUNDS}"
            result["change_longest_hold_ms"] = round(longest[0] * 1000, 1)
        if daemon.poll() is None:
            result["daemon_peak_rss_mib"] = round(vm(daemon.pid, "VmHWM") / 1024, 1)

        # A restart, the folder in step.
        daemon.terminate()
        daemon.wait()
        longest[0] = 0.0
        started = time.monotonic()
        again = subprocess.Popen([CHIME, "daemon", "--config", alarms, "--state-dir", state], env=env, stderr=log)
        procs.append(again)
        result["restart_answer_seconds"] = answer(again, started, started + START_LIMIT)
        longest[0] = 0.0  # (from its first answer: its start, loading its store, is not the loop held)
        follow(started, again, "restart")
        result["restart_longest_hold_ms"] = round(longest[0] * 1000, 1)
        pinging.set()
        loop.quit()
    finally:
        # What was measured, before the bus goes (GIO ends a process whose session bus closes, by
        # SIGTERM, which is ignored from here).
        print(json.dumps(result), flush=True)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        # EDS's processes, activated on the bus: stopped with it (by the desktop, by PID).
        if desktop is not None:
            try:
                names = dbus.Interface(dbus.SessionBus().get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                                       "org.freedesktop.DBus")
                for name in names.ListNames():
                    if str(name).startswith(":"):
                        pid = int(names.GetConnectionUnixProcessID(name))
                        with open(f"/proc/{pid}/comm") as f:
                            if f.read().startswith("evolution-"):
                                os.kill(pid, 15)
            except Exception:
                pass
            desktop.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
