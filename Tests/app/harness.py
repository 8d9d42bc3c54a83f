"""A desktop session for the app's tests: the one test desktop (scripts/testdesktop.py: a private
session bus with the accessibility bus, Xvfb, dunst), the real chime daemon with a recording sound
player, and the app itself; every process started here is stopped by its PID. The app is driven
through its accessibility tree (AT-SPI), as a screen reader or a person with a keyboard would.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import testdesktop  # noqa: E402
from testdesktop import until  # noqa: E402,F401  (the tests and benchmarks take it from here)


class Session:
    def __init__(self, chime, app, language="C.UTF-8", languages=None, alarm_file=None, width=1280, height=800):
        self.chime_path = chime
        self.app_path = app
        self.dir = tempfile.mkdtemp(prefix="chime-app-")
        self.procs = []
        self.log = open(os.path.join(self.dir, "session.log"), "w")
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "LANGUAGE", "LC_ALL", "LC_MESSAGES")}
        player = os.path.join(self.dir, "player")
        os.makedirs(player)
        self.plays = os.path.join(self.dir, "plays.log")
        # The recording player: notes each start, plays (sleeps), notes how it ended.
        with open(os.path.join(player, "canberra-gtk-play"), "w") as f:
            f.write(f"""#!/bin/sh
echo "start $$ $*" >> '{self.plays}'
trap 'echo "stopped $$" >> "{self.plays}"; exit 143' TERM
sleep 30 & wait $!
echo "end $$" >> '{self.plays}'
""")
        os.chmod(os.path.join(player, "canberra-gtk-play"), 0o755)
        env.update(HOME=self.dir, XDG_RUNTIME_DIR=os.path.join(self.dir, "run"), XDG_CONFIG_HOME=os.path.join(self.dir, "config"),
                   XDG_DATA_HOME=os.path.join(self.dir, "data"), XDG_STATE_HOME=os.path.join(self.dir, "state"),
                   XDG_CACHE_HOME=os.path.join(self.dir, "cache"), GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="0",
                   GTK_A11Y="atspi", GDK_BACKEND="x11", LANG=language, PATH=player + ":" + env.get("PATH", "/usr/bin:/bin"),
                   CHIME_ICONDIR=os.path.join(ROOT, "packaging", "app", "icons"), LIBGL_ALWAYS_SOFTWARE="1",
                   CHIME_TRACE="1",
                   # No sound server: the daemon plays through the recording player above (and never
                   # through the speakers of the session the tests run in).
                   PULSE_SERVER="unix:" + os.path.join(self.dir, "no-sound-server"),
                   # GTK's GL renderer is Mesa's software rasterizer under Xvfb: the first time it draws
                   # a kind of widget it compiles shaders for 100-300 ms, which no desktop with a GPU
                   # sees. The tests use GTK's cairo renderer; the benchmark measures both.
                   GSK_RENDERER="cairo")
        if languages:
            env["LANGUAGE"] = languages
            env["CHIME_LOCALEDIR"] = os.path.join(ROOT, ".build", "dist", "locale")
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        os.makedirs(os.path.join(env["XDG_CONFIG_HOME"], "chime"))
        self.alarm_file = os.path.join(env["XDG_CONFIG_HOME"], "chime", "alarms.toml")
        with open(self.alarm_file, "w") as f:
            f.write(alarm_file or "")
        self.env = env
        self.width, self.height = width, height

    # MARK: processes

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, env=kw.pop("env", self.env), stdout=kw.pop("stdout", self.log), stderr=kw.pop("stderr", self.log),
                             stdin=subprocess.DEVNULL, **kw)
        self.procs.append(p)
        return p

    def start(self, app=True, daemon=True, daemon_wrapper=()):
        """The bus, the accessibility bus, Xvfb, dunst, the daemon (daemon=False: none yet, but the bus
        starts it when it is called, as an installed chime's D-Bus service file has it), and (unless
        app=False) the app."""
        services = os.path.join(self.dir, "services")
        os.makedirs(services)
        with open(os.path.join(services, "org.chime.Scheduler.service"), "w") as f:
            f.write(f"[D-BUS Service]\nName=org.chime.Scheduler\nExec={self.chime_path} daemon\n")
        self.desktop = testdesktop.Desktop(services=services, display=f"{self.width}x{self.height}", accessibility=True, dunst=True,
                                           env=self.env, directory=os.path.join(self.dir, "desktop")).start()
        self.env = self.desktop.env
        if daemon:
            self.daemon = self.spawn([*daemon_wrapper, self.chime_path, "daemon"], stderr=open(os.path.join(self.dir, "daemon.log"), "w"))
            # Waited for by its name on the bus, which activates nothing: a call (`chime list`) made
            # before it owns the name would have the bus start another daemon (the service file's,
            # without this one's wrapper), and this one would then find the name taken.
            until(lambda: self.daemon.poll() is not None or self.pid_of("org.chime.Scheduler") == self.daemon.pid, 10, "the chime daemon")
            if self.daemon.poll() is not None:
                raise RuntimeError(f"the chime daemon exited ({self.daemon.returncode}): see {self.dir}/daemon.log")
        # The test's own AT-SPI client speaks to this session.
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.env["DBUS_SESSION_BUS_ADDRESS"]
        os.environ["DISPLAY"] = self.env["DISPLAY"]
        if app:
            self.start_app()

    def start_app(self, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        self.app = self.spawn([self.app_path], env=env, stderr=open(os.path.join(self.dir, "app.log"), "a"))
        return self.app

    def stop(self):
        # A daemon the bus started (activation) is not one of ours by Popen: stopped by its PID.
        if getattr(self, "activated_daemon", None):
            try:
                os.kill(self.activated_daemon, 15)
            except OSError:
                pass
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 5
        for p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if getattr(self, "desktop", None):
            self.desktop.stop()
            self.desktop = None
        self.log.close()

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def logs(self):
        out = []
        for name in ("app.log", "daemon.log", "session.log"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f"--- {name}\n" + f.read()[-4000:])
        return "\n".join(out)

    # MARK: commands

    def gdbus(self, dest, path, method, *args):
        r = subprocess.run(["gdbus", "call", "--session", "-d", dest, "-o", path, "-m", method, *args],
                           env=self.env, capture_output=True, text=True, timeout=10)
        return r.stdout.strip() if r.returncode == 0 else None

    def owner(self, name):
        """The unique name owning `name` on the session bus, or None."""
        out = self.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetNameOwner", name)
        return out.strip("(',)") if out else None

    def pid_of(self, name):
        out = self.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", name)
        return int(out.strip("(,)").split()[-1]) if out else None

    def chime(self, *args):
        r = subprocess.run([self.chime_path, *args], env=self.env, capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout, r.stderr

    def app_log(self):
        with open(os.path.join(self.dir, "app.log"), errors="replace") as f:
            return f.read()

    def played(self):
        if not os.path.exists(self.plays):
            return []
        with open(self.plays) as f:
            return [line.split() for line in f.read().splitlines()]

    def screenshot(self, path, window_only=True):
        subprocess.run(["import", "-window", "root", path], env=self.env, check=True)
