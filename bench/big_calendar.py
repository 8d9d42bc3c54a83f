#!/usr/bin/python3
"""A big shared calendar followed by the daemon (issue 34): what it costs the alarms beside it.

A followed .ics of EVENTS events (100,000 by default, just under the 16 MiB a calendar may hold: a
colleague's shared calendar, each event with a VALARM 10 minutes before, spread over the coming year)
is named by the alarm file's [[calendar]]. In the one test desktop (scripts/testdesktop.py: a session
bus) with a notification server that only replies (bench/c/trivial_server.c), the daemon is started
and measured:
  - answer: from its start to its first answer to ListPending (the target: within 0.1 s);
  - plain alarm: one due about 3 s after the start (set by a daemon started before without the
    calendar), how late its Fired signal came (its timeliness, and the signal's arrival minus its
    due time: on time is the target);
  - all known: from the start to Status's pending count holding every calendar alarm (target: 3 s);
  - edit: the file's last event taken out; the longest answer to org.freedesktop.DBus.Peer.Ping (sent
    every 5 ms, answered by the daemon's loop) from the edit until its alarm is gone: the longest
    the loop was held (target: 10 ms);
    the same pings for 2 s before the edit, with nothing to do, say what the measure itself costs;
  - peak RSS (VmHWM) at the end (target: under 150 MiB), and its reader's (the child that reads the
    file and its calendars, looked at every 20 ms while it runs).
Each wait is bounded (START_LIMIT seconds): what did not happen within it is reported as such.

    big_calendar.py CHIME TRIVIAL_SERVER [EVENTS]     prints one JSON object
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import testdesktop  # noqa: E402

import dbus  # noqa: E402
import dbus.mainloop.glib  # noqa: E402
from gi.repository import GLib  # noqa: E402

CHIME, SERVER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
EVENTS = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
LIMIT = 16 * 1024 * 1024  # what a followed calendar may hold
START_LIMIT = float(os.environ.get("START_LIMIT", "120"))
NAME, PATH, IFACE = "org.chime.Scheduler", "/org/chime/Scheduler", "org.chime.Scheduler1"


def calendar(events, start):
    """An .ics of `events` timed events from `start` (Unix seconds), each with a VALARM, padded with a
    description to just under LIMIT bytes."""
    head = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//chime//bench//EN\r\n"
    tail = "END:VCALENDAR\r\n"

    def event(i, pad):
        t = time.gmtime(start + i * 311)  # every 5 min 11 s: 100,000 of them cover a year
        stamp = time.strftime("%Y%m%dT%H%M%SZ", t)
        description = f"DESCRIPTION:{pad}\r\n" if pad else ""
        return (f"BEGIN:VEVENT\r\nUID:b{i}@x\r\nDTSTART:{stamp}\r\nSUMMARY:Meeting {i}\r\n{description}"
                f"BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\nEND:VEVENT\r\n")

    bare = sum(len(event(i, "")) for i in range(events)) + len(head) + len(tail)
    room = (LIMIT - 4096 - bare) // events - len("DESCRIPTION:\r\n")
    pad = "x" * min(max(room, 0), 60)  # a content line stays under 75 octets
    return head + "".join(event(i, pad) for i in range(events)) + tail


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def main():
    work = tempfile.mkdtemp(prefix="chime-bench-calendar-")
    procs = []
    env = dict(os.environ, HOME=work, XDG_RUNTIME_DIR=work, XDG_CONFIG_HOME=os.path.join(work, "config"),
               XDG_STATE_HOME=os.path.join(work, "state"))
    result = {"events": EVENTS}
    desktop = None
    try:
        os.makedirs(os.path.join(work, "calendars"))
        ics = os.path.join(work, "calendars", "shared.ics")
        text = calendar(EVENTS, int(time.time()) + 3600)
        with open(ics, "w") as f:
            f.write(text)
        result["bytes"] = len(text.encode())
        alarms = os.path.join(work, "alarms.toml")
        with open(alarms, "w") as f:
            f.write(f'[[calendar]]\npath = "{ics}"\nlabel = "shared"\n')

        desktop = testdesktop.Desktop(env=env, directory=os.path.join(work, "desktop")).start()
        env = desktop.env
        log = open(os.path.join(work, "log"), "w")
        procs.append(subprocess.Popen([SERVER], env=env, stdout=log, stderr=log))
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = env["DBUS_SESSION_BUS_ADDRESS"]
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()

        fired = {}

        def on_fired(identifier, due, timeliness):
            fired[str(identifier)] = (time.time(), int(due), str(timeliness))

        bus.add_signal_receiver(on_fired, signal_name="Fired", dbus_interface=IFACE)
        loop = GLib.MainLoop()
        threading.Thread(target=loop.run, daemon=True).start()

        state = os.path.join(work, "chime")

        def answer(daemon, started, deadline):
            while time.monotonic() < deadline and daemon.poll() is None:
                try:
                    dbus.Interface(bus.get_object(NAME, PATH), IFACE).ListPending(timeout=START_LIMIT)
                    return time.monotonic() - started
                except dbus.DBusException:
                    time.sleep(0.005)
            return None

        # The plain alarm, set first by a daemon without the calendar: due 4 s later (a whole second,
        # as `Fired` says it), while the next daemon reads the calendar.
        first = subprocess.Popen([CHIME, "daemon", "--no-config", "--state-dir", state], env=env, stderr=log)
        if answer(first, time.monotonic(), time.monotonic() + 30) is None:
            raise SystemExit("big_calendar.py: the daemon did not start")
        plain_due = int(time.time()) + 4
        dbus.Interface(bus.get_object(NAME, PATH), IFACE).Add(dbus.Dictionary({"title": "Plain", "id": "plain", "at": dbus.Int64(plain_due)}, signature="sv"))
        first.terminate()
        first.wait()

        started = time.monotonic()
        daemon = subprocess.Popen([CHIME, "daemon", "--config", alarms, "--state-dir", state], env=env, stderr=log)
        procs.append(daemon)
        # The daemon's reader (a child while it reads): its peak RSS, looked at every 20 ms.
        reader_peak = [0]
        watching = threading.Event()

        def watch_reader():
            while not watching.is_set():
                try:
                    with open(f"/proc/{daemon.pid}/task/{daemon.pid}/children") as f:
                        children = f.read().split()
                except OSError:
                    children = []
                for child in children:
                    try:
                        reader_peak[0] = max(reader_peak[0], vm(child, "VmHWM"))
                    except (OSError, StopIteration):
                        pass
                time.sleep(0.02)

        threading.Thread(target=watch_reader, daemon=True).start()
        result["plain_due_after_start_seconds"] = round(plain_due - time.time(), 2)
        deadline = started + START_LIMIT
        answered = answer(daemon, started, deadline)
        result["answer_seconds"] = answered

        def status_pending():
            status = dbus.Interface(bus.get_object(NAME, PATH), IFACE).Status(timeout=START_LIMIT)
            return int(status["pending"])

        known = None
        plain_set = True
        while time.monotonic() < deadline and daemon.poll() is None:
            try:
                # (The plain alarm counts among the pending until it fires.)
                if status_pending() >= EVENTS + (1 if plain_set and "plain" not in fired else 0):
                    known = time.monotonic() - started
                    break
            except dbus.DBusException:
                pass
            time.sleep(0.02)
        result["all_known_seconds"] = known
        while "plain" not in fired and time.time() < plain_due + START_LIMIT:
            time.sleep(0.01)
        if "plain" in fired:
            arrival, due, timeliness = fired["plain"]
            result["plain_late_ms"] = round((arrival - due) * 1000, 1)
            result["plain_timeliness"] = timeliness

        # An edit; the loop's longest hold while the file is read again.
        if known is not None:
            peer = dbus.Interface(bus.get_object(NAME, PATH), "org.freedesktop.DBus.Peer")
            longest = [0.0]
            stop = threading.Event()

            def ping():
                while not stop.is_set():
                    t0 = time.monotonic()
                    try:
                        peer.Ping(timeout=START_LIMIT)
                    except dbus.DBusException:
                        pass
                    longest[0] = max(longest[0], time.monotonic() - t0)
                    time.sleep(0.005)

            pinger = threading.Thread(target=ping, daemon=True)
            pinger.start()
            time.sleep(0.2)
            # The same pings with nothing to do: what the measure itself costs (this script's
            # threads, the bus), beside which the edit's figure is read.
            longest[0] = 0.0
            time.sleep(2)
            result["idle_longest_hold_ms"] = round(longest[0] * 1000, 1)
            longest[0] = 0.0
            edited = time.monotonic()
            # (One event fewer: one more would pass the 100,000 alarms calendars may bring.)
            last = text.rindex("BEGIN:VEVENT\r\n")
            with open(ics + ".new", "w") as f:
                f.write(text[:last] + "END:VCALENDAR\r\n")
            os.rename(ics + ".new", ics)
            relearned = None
            while time.monotonic() < edited + START_LIMIT and daemon.poll() is None:
                try:
                    if status_pending() == EVENTS - 1:
                        relearned = time.monotonic() - edited
                        break
                except dbus.DBusException:
                    pass
                time.sleep(0.02)
            stop.set()
            pinger.join()
            result["edit_known_seconds"] = relearned
            result["edit_longest_hold_ms"] = round(longest[0] * 1000, 1)
        watching.set()
        result["reader_peak_rss_mib"] = round(reader_peak[0] / 1024, 1)
        if daemon.poll() is None:
            result["peak_rss_mib"] = round(vm(daemon.pid, "VmHWM") / 1024, 1)
        else:
            result["daemon"] = f"exited with status {daemon.returncode}"
        loop.quit()
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if desktop:
            desktop.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))


main()
