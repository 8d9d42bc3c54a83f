#!/usr/bin/python3
"""Pictures of the desktop app for docs/app/ and its AppStream metainfo: the alarms (light, dark,
and at 360 px, the narrowest a phone-sized window is), the New Alarm dialog, the timers (dark),
the ringing window and this desktop's page. Each is the real app on a private session (Xvfb,
dunst, the real daemon), set up through the command line as a user would.

    screenshots.py CHIME CHIME_ALARMS OUTDIR
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Session, until  # noqa: E402

CHIME, APP, OUT = (os.path.abspath(a) for a in sys.argv[1:4])
sys.argv[1:3] = [CHIME, APP]  # test_app reads them too
ALARM_FILE = """
[[alarm]]
id = "standup"
when = "09:30 mon-fri"
title = "Stand-up"

[[timer]]
name = "eggs"
duration = "7m"
title = "Eggs are done"

[[timer]]
name = "tea"
duration = "3m30s"
title = "Tea is ready"
"""


def window_box(session, title):
    """The on-screen rectangle of the top-level window titled `title` (there is no window manager)."""
    from Xlib import display as xdisplay
    x = xdisplay.Display(session.env["DISPLAY"])
    for w in x.screen().root.query_tree().children:
        try:
            if w.get_wm_name() == title and w.get_attributes().map_state == 2:
                g = w.get_geometry()
                return w, (g.x, g.y, g.width, g.height), x
        except Exception:
            continue
    return None


def shoot(session, title, name):
    found = until(lambda: window_box(session, title), 10, f"the window {title!r}")
    _, (x, y, w, h), _ = found
    time.sleep(0.6)  # animations (the view switcher, the toast) settle
    path = os.path.join(OUT, name)
    subprocess.run(["import", "-window", "root", "-crop", f"{w}x{h}+{x}+{y}", "+repage", path], env=session.env, check=True)
    print(f"wrote {path} ({w}x{h})")


def resize(session, title, width, height):
    window, _, x = until(lambda: window_box(session, title), 10, f"the window {title!r}")
    window.configure(width=width, height=height)
    x.sync()
    time.sleep(0.5)


def session(dark=False):
    s = Session(CHIME, APP, alarm_file=ALARM_FILE)
    if dark:
        s.env["ADW_DEBUG_COLOR_SCHEME"] = "prefer-dark"
    s.start(app=False)
    for args in (["at", "07:00", "--days", "mon-fri", "--sound", "default", "--id", "wake", "--label", "Wake up", "Wake up"],
                 ["at", "16:35", "--days", "mon,wed", "--sound", "bell", "--id", "homeroom", "--label", "Homeroom", "Homeroom"],
                 ["at", "08:15", "--days", "sat,sun", "--id", "run", "--label", "Long run", "Long run"]):
        status, _, err = s.chime(*args)
        assert status == 0, err
    s.chime("disable", "run")
    return s


def main():
    os.makedirs(OUT, exist_ok=True)
    if len(sys.argv) < 5:
        # Each style in a process of its own (libatspi follows the first session it sees).
        for style in ("light", "dark"):
            subprocess.run([sys.executable, os.path.abspath(__file__), CHIME, APP, OUT, style], check=True)
        return
    for dark in (sys.argv[4] == "dark",):
        s = session(dark)
        style = "dark" if dark else "light"
        try:
            s.start_app()
            until(lambda: "first frame at" in s.app_log(), 10, "the app's first frame")
            shoot(s, "Alarms", f"alarms-{style}.png")
            if not dark:
                resize(s, "Alarms", 360, 640)
                shoot(s, "Alarms", "alarms-narrow.png")
                resize(s, "Alarms", 480, 640)
                # The dialog, from the keyboard.
                from test_app import App  # noqa: E402 (after the session: it loads AT-SPI)
                app = App(s)
                app.focus("Alarms")
                app.key("n", "Control_L")
                shoot(s, "New Alarm", "dialog-light.png")
                app.key("Escape")
            else:
                s.chime("timer", "eggs")
                s.chime("in", "25m", "--label", "Pizza", "Pizza")
                status, out, _ = s.chime("list", "--json")
                from test_app import App  # noqa: E402
                app = App(s)
                app.focus("Alarms")
                app.key("2", "Alt_L")
                time.sleep(1.5)
                shoot(s, "Alarms", "timers-dark.png")
                app.key("3", "Alt_L")
                shoot(s, "Alarms", "desktop-dark.png")
                s.chime("in", "1s", "--sound", "bell", "--id", "tea", "Tea is ready")
                shoot(s, "Tea is ready", "ringing-dark.png")
        finally:
            s.stop()
            s.remove()


if __name__ == "__main__":
    main()
