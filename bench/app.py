#!/usr/bin/python3
"""The desktop app beside gnome-clocks, measured the same way in the same run.

Each launch gets a fresh private session (Xvfb, a session bus, dunst, the chime daemon) with 100
alarms: chime's set through `chime at`, gnome-clocks' written to its `alarms` setting (a GSettings
keyfile; it opens on its Alarms page). Measured from outside, identically for both apps:
  - launch → first frame: from spawning the process to the first drawing on the screen inside its
    first mapped top-level window (the X DAMAGE extension reports every change of the screen's
    contents; there is no compositor). The X server's own clearing of a window it maps comes within
    3 ms of the map and is not a frame: damage in the first 5 ms after the map is not counted;
  - memory: the process's resident set (VmRSS) one second after that first frame.
Then chime-alarms alone with 100,000 alarms (a shared calendar's worth): launch → first frame of the
list, and scrolling it: the mouse wheel turned 120 times a second for 3 s over the list (XTest), each
frame's work (the frame clock's before-paint to after-paint, from the app's CHIME_TRACE lines) read;
a frame whose work takes over 16.7 ms misses a 60 Hz display's next frame (dropped). Each is measured
with GTK's default renderer (GL: under Xvfb that is Mesa's software rasterizer, whose start-up
dominates) and with GSK_RENDERER=cairo, for both apps alike.

    app.py CHIME CHIME_ALARMS [RUNS]      prints one JSON object
"""

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "app"))
from harness import Session, until  # noqa: E402
from Xlib import X, display as xdisplay  # noqa: E402
from Xlib.ext import damage, xtest  # noqa: E402

CHIME, APP = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
CLOCKS = "/usr/bin/gnome-clocks"


def clocks_alarms(n):
    """gnome-clocks 43's `alarms` setting (aa{sv}; days as ISO weekday numbers), as GVariant text."""
    items = []
    for i in range(n):
        days = "[1, 2, 3, 4, 5]" if i % 2 == 0 else "@ai []"
        items.append(f"{{'name': <'Alarm {i}'>, 'id': <'a{i}'>, 'active': <true>, 'hour': <{i // 60 % 24}>, "
                     f"'minute': <{i % 60}>, 'days': <{days}>, 'snooze_minutes': <10>, 'ring_minutes': <5>}}")
    return "[" + ", ".join(items) + "]"


def first_frame(session, argv, env):
    """Spawns argv; returns (seconds to the first drawing inside its first top-level window, RSS in KiB
    one second later, the process)."""
    x = xdisplay.Display(session.env["DISPLAY"])
    root = x.screen().root
    root.change_attributes(event_mask=X.SubstructureNotifyMask)
    x.damage_query_version()
    watch = root.damage_create(damage.DamageReportRawRectangles)
    x.sync()
    while x.pending_events():
        x.next_event()
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(session.dir, "bench-app.log"), "a"))
    session.procs.append(proc)
    mapped = None
    deadline = started + 30
    while time.monotonic() < deadline:
        if not x.pending_events():
            time.sleep(0.0005)
            continue
        event = x.next_event()
        if event.type == X.MapNotify and mapped is None and not event.override:
            g = event.window.get_geometry()
            if g.width > 50 and g.height > 50:
                mapped = (g.x, g.y, g.width, g.height)
                mapped_at = time.monotonic()
        elif mapped is not None and event.type == x.extension_event.DamageNotify and time.monotonic() - mapped_at >= 0.005:
            a = event.area
            mx, my, mw, mh = mapped
            if a.x < mx + mw and a.x + a.width > mx and a.y < my + mh and a.y + a.height > my:
                took = time.monotonic() - started
                time.sleep(1)
                with open(f"/proc/{proc.pid}/status") as f:
                    rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
                x.damage_destroy(watch)
                x.close()
                return took, rss, proc
    raise TimeoutError(f"{argv[0]}: no frame within 30 s")


def session_with_alarms(n, clocks):
    s = Session(CHIME, APP, alarm_file="")
    s.start(app=False)
    if clocks:
        settings = os.path.join(s.env["XDG_CONFIG_HOME"], "glib-2.0", "settings")
        os.makedirs(settings)
        with open(os.path.join(settings, "keyfile"), "w") as f:
            f.write(f"[org/gnome/clocks]\nalarms={clocks_alarms(n)}\n\n[org/gnome/clocks/state/window]\npanel-id='alarm'\n")
        s.env["GSETTINGS_BACKEND"] = "keyfile"
    elif n <= 1000:
        for i in range(n):
            days = ["--days", "mon-fri"] if i % 2 == 0 else []
            status, _, err = s.chime("at", f"{i // 60 % 24:02d}:{i % 60:02d}", *days, "--id", f"a{i}", f"Alarm {i}")
            assert status == 0, err
    else:
        with open(s.alarm_file, "w") as f:
            for i in range(n):
                f.write(f'[[alarm]]\nid = "a{i}"\nwhen = "{i // 60 % 24:02d}:{i % 60:02d}"\ntitle = "Alarm {i}"\n\n')
        s.chime("config", "reload")
        until(lambda: (json.loads(s.chime("status", "--json")[1])["alarmFile"] or {}).get("alarms") == n, 300, f"{n} alarms")
    return s


def launch_env(s, renderer):
    """The session's environment for a launch with `renderer` (the test harness picks cairo; here
    each run says which one it measures), without the app's trace."""
    env = dict(s.env)
    env.pop("CHIME_TRACE", None)
    if renderer == "gl":
        env.pop("GSK_RENDERER", None)
    else:
        env["GSK_RENDERER"] = renderer
    return env


def measure(which, n, renderer):
    s = session_with_alarms(n, clocks=which == "gnome-clocks")
    try:
        env = launch_env(s, renderer)
        argv = [CLOCKS] if which == "gnome-clocks" else [APP]
        took, rss, _ = first_frame(s, argv, env)
        return took, rss
    finally:
        s.stop()
        s.remove()


def scroll(s, env, seconds=3.0, rate=120):
    """Launches the app on `s`, waits for its list, turns the wheel over it; the frames' work in ms."""
    env = dict(env, CHIME_TRACE="1")
    _, _, proc = first_frame(s, [APP], env)
    log = os.path.join(s.dir, "bench-app.log")
    time.sleep(1.5)  # the rest of the list comes in after the first frame
    x = xdisplay.Display(s.env["DISPLAY"])
    root = x.screen().root
    tree = [w for w in root.query_tree().children if w.get_attributes().map_state == X.IsViewable]
    g = max(tree, key=lambda w: w.get_geometry().width * w.get_geometry().height).get_geometry()
    xtest.fake_input(x, X.MotionNotify, x=g.x + g.width // 2, y=g.y + g.height // 2)
    x.sync()
    time.sleep(0.3)
    with open(log) as f:
        before = len(f.read().splitlines())
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        xtest.fake_input(x, X.ButtonPress, 5)
        xtest.fake_input(x, X.ButtonRelease, 5)
        x.sync()
        time.sleep(1 / rate)
    time.sleep(0.3)
    x.close()
    with open(log) as f:
        lines = f.read().splitlines()[before:]
    frames = [(int(a), int(b)) for a, b in (line.split()[1:3] for line in lines if line.startswith("frame "))]
    proc.terminate()
    proc.wait()
    return [round((end - start) / 1000, 2) for start, end in frames]


def big_list(renderer, n=100000, launches=3):
    s = session_with_alarms(n, clocks=False)
    try:
        env = launch_env(s, renderer)
        firsts = []
        for _ in range(launches):
            took, rss, proc = first_frame(s, [APP], env)
            proc.terminate()
            proc.wait()
            firsts.append((took, rss))
        work = scroll(s, env)
        over = [w for w in work if w > 1000 / 60]
        return {"alarms": n, "first_frame_ms": round(statistics.median(v[0] for v in firsts) * 1000, 1),
                "first_frame_ms_all": [round(v[0] * 1000, 1) for v in firsts],
                "rss_mib": round(statistics.median(v[1] for v in firsts) / 1024, 1),
                "scroll_frames": len(work), "scroll_work_ms_median": statistics.median(work) if work else None,
                "scroll_work_ms_max": max(work) if work else None, "scroll_frames_over_16_7_ms": len(over)}
    finally:
        s.stop()
        s.remove()


def main():
    results = {"runs": RUNS, "alarms": 100}
    for renderer in ("gl", "cairo"):
        samples = {"chime-alarms": [], "gnome-clocks": []}
        for _ in range(RUNS):
            for which in ("chime-alarms", "gnome-clocks"):  # alternated, so both see the same machine
                samples[which].append(measure(which, 100, renderer))
        r = {}
        for which, values in samples.items():
            r[which] = {"first_frame_ms": round(statistics.median(v[0] for v in values) * 1000, 1),
                        "first_frame_ms_all": [round(v[0] * 1000, 1) for v in values],
                        "rss_mib": round(statistics.median(v[1] for v in values) / 1024, 1)}
        c, g = r["chime-alarms"], r["gnome-clocks"]
        r["ratio_first_frame"] = round(c["first_frame_ms"] / g["first_frame_ms"], 2)
        r["ratio_rss"] = round(c["rss_mib"] / g["rss_mib"], 2)
        r["chime-alarms-100000"] = big_list(renderer)
        results[renderer] = r
    print(json.dumps(results))


if __name__ == "__main__":
    if os.environ.get("APP_BENCH_ONLY") == "big":
        print(json.dumps({renderer: big_list(renderer) for renderer in ("gl", "cairo")}))
    else:
        main()
