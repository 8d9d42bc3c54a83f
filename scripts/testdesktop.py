"""chime's one private test desktop: a session bus of its own, and when asked an X display (Xvfb),
the accessibility bus, dunst (the real notification server of the tests, with few popups on screen)
and PulseAudio with a null sink (its monitor to record what plays). Every process is started here and
stopped here by its PID; nothing of the session the tests run in (its bus, display or speakers) is
reached.

Used by everything that needs a desktop: the Swift tests (TestSupport's TestDesktop runs `serve`), the
app's tests, the examples, the desktop matrix, the benchmarks, `make demo` and the screenshot (`run`,
or this module imported). One place to change how a test desktop is made.

    testdesktop.py run [PARTS] -- COMMAND...   the desktop, COMMAND in it, then the desktop stopped;
                                               exits with COMMAND's status
    testdesktop.py serve [PARTS]               the desktop, described in one JSON line on stdout, then
                                               commands read from stdin, one a line, each answered in
                                               one JSON line: `start dunst [DUNSTRC]`, `stop dunst`, `kill dunst`
                                               (SIGKILL: a crash), `quit`; stdin's end stops it all;
                                               --shell: each answer a line for a shell's eval instead
                                               (`export DISPLAY=':5'; ...`, CHIME_DESKTOP_DIR=...)
    PARTS: --display [WxH]  --accessibility  --dunst  --sound  --services DIR  --system-bus  --dir DIR
           --no-bus (a sound server alone)  --wait SECONDS (for a place, below; 60 by default)

How many desktops with a display or a sound server run at once on the machine is bounded
(CHIME_TEST_DESKTOPS, by default three times the processors, at least 6; a bus alone costs little and is not
counted): such a desktop waits for a free place before it starts, so dozens of tests starting together
do not start dozens of servers at once on two cores. The wait is bounded too, and past it the
desktop starts anyway: the bound staggers a storm, it never stops a run. (The Swift tests wait at most
5 s: a test that waits holds one of the test runner's few threads, which the tests holding the places
may need in order to finish.)
"""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# dunst with few popups on screen, so it stays fast (it slows down as popups pile up; the rest wait
# their turn); no scripts, no browser; a click does the default action and closes the popup. Popups go
# after a minute (dunst's own default is 10 s: a test on a busy machine may look at what is shown
# later than that), critical ones stay.
DUNSTRC = """[global]
    notification_limit = 5
    history_length = 20
    idle_threshold = 0
    show_indicators = no
    browser = /bin/true
    dmenu = /bin/true
    mouse_left_click = do_action, close_current
[urgency_low]
    timeout = 60
[urgency_normal]
    timeout = 60
[urgency_critical]
    timeout = 0
"""

SINK = "chime_test"
RATE = 48000
SLOTS_DIR = os.path.join(tempfile.gettempdir(), f"chime-test-desktops-{os.getuid()}")


def until(check, seconds, what, interval=None):
    """Waits for check() to be truthy and returns its value; raises, naming what did not come.
    Unless `interval` says how often, it looks every 20 ms for the first second, then every 100 ms,
    and from five seconds on every 250 ms (as the Swift tests' waitUntil does): a check that walks an
    app's accessibility tree costs the app and the bus, and a long wait is for something slow."""
    begun = time.monotonic()
    deadline = begun + seconds
    while True:
        try:
            value = check()
            if value:
                return value
        except Exception:
            if time.monotonic() >= deadline:
                raise
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} did not come within {seconds} s")
        waited = time.monotonic() - begun
        time.sleep(interval if interval is not None else 0.02 if waited < 1 else 0.1 if waited < 5 else 0.25)


class Desktop:
    """One private desktop. `env` is what a program needs to live in it (the caller's environment
    without its bus, display or sound server, and this desktop's); `pids` names its processes."""

    def __init__(self, bus=True, display=None, accessibility=False, dunst=False, sound=False, services=None,
                 system_bus=False, directory=None, env=None, wait=60):
        self.parts = dict(bus=bus, display=display, accessibility=accessibility, dunst=dunst, sound=sound,
                          services=services, system_bus=system_bus)
        self.dir = directory or tempfile.mkdtemp(prefix="chime-desktop-")
        self.own_dir = directory is None
        os.makedirs(self.dir, exist_ok=True)
        base = dict(os.environ if env is None else env)
        for key in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER", "PULSE_CLIENTCONFIG"):
            base.pop(key, None)
        # No sound server unless this desktop has one: nothing reaches the speakers of the session
        # the tests run in.
        base["PULSE_SERVER"] = "unix:" + os.path.join(self.dir, "no-sound-server")
        self.env = base
        self.exported = {"PULSE_SERVER": base["PULSE_SERVER"]}
        self.procs = {}  # name -> Popen, in start order
        self.log = open(os.path.join(self.dir, "desktop.log"), "a")
        self.slot = None
        self.wait = wait
        self.pipes = []

    # MARK: starting and stopping

    def start(self):
        p = self.parts
        # A bus alone is cheap (a test keeping one longer than it needs costs nothing): only a desktop
        # with a display, dunst or a sound server takes a place.
        if p["display"] or p["dunst"] or p["accessibility"] or p["sound"]:
            self._take_slot()
        try:
            if p["bus"]:
                self.add_bus("session", p["services"])
            if p["system_bus"]:
                self.add_bus("system", None)
            if p["display"] or p["dunst"] or p["accessibility"]:
                self.add_display(p["display"] or "1280x800")
            if p["accessibility"]:
                self.add_accessibility()
            if p["dunst"]:
                self.start_dunst()
            if p["sound"]:
                self.add_sound()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        """Stops every process by its PID, newest first (SIGTERM, SIGKILL after 5 s), and removes
        the directory this desktop made."""
        for name in reversed(list(self.procs)):
            self.stop_part(name)
        self.log.close()
        for fd in self.pipes:
            os.close(fd)
        self.pipes = []
        if self.slot is not None:
            os.close(self.slot)
            self.slot = None
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def stop_part(self, name, sig=signal.SIGTERM):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        p.send_signal(sig)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def spawn(self, name, argv, env=None, **kw):
        """Starts a process of this desktop (stopped with it, newest first), under `name` (None: a name
        of its own); stdout and stderr to the desktop's log unless given."""
        kw.setdefault("stdout", self.log)
        kw.setdefault("stderr", self.log)
        p = subprocess.Popen(argv, env=env or self.env, stdin=subprocess.DEVNULL, **kw)
        self.procs[name or f"process-{p.pid}"] = p
        return p

    @property
    def pids(self):
        return {name: p.pid for name, p in self.procs.items() if p.poll() is None}

    def describe(self):
        return {"directory": self.dir, "env": self.exported, "pids": self.pids}

    def _take_slot(self):
        limit = int(os.environ.get("CHIME_TEST_DESKTOPS") or max(6, 3 * (os.cpu_count() or 1)))
        try:
            os.makedirs(SLOTS_DIR, mode=0o700, exist_ok=True)
        except OSError:
            return  # no place to count desktops: unbounded, as before
        deadline = time.monotonic() + self.wait
        while True:
            for i in range(limit):
                try:
                    fd = os.open(os.path.join(SLOTS_DIR, f"slot-{i}"), os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
                except OSError:
                    return
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self.slot = fd
                    return
                except OSError:
                    os.close(fd)
            # A bound, never a deadlock: past the wait, start anyway.
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)

    def _set(self, key, value):
        self.env[key] = value
        self.exported[key] = value

    # MARK: the parts

    def add_bus(self, kind="session", services=None):
        conf = os.path.join(self.dir, f"{kind}-bus.conf")
        listen = os.path.join(self.dir, f"{kind}-bus")
        os.makedirs(listen, exist_ok=True)
        servicedir = f"<servicedir>{services}</servicedir>" if services else ""
        with open(conf, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>{kind}</type>
  <listen>unix:dir={listen}</listen>
  <auth>EXTERNAL</auth>
  {servicedir}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
""")
        p = self.spawn(f"{kind}-bus", ["dbus-daemon", f"--config-file={conf}", "--nofork", "--print-address=1", "--nopidfile"],
                       stdout=subprocess.PIPE)
        address = p.stdout.readline().decode().strip()
        p.stdout.close()  # it prints nothing more
        if not address:
            raise RuntimeError(f"dbus-daemon ({kind}) printed no address; see {self.dir}/desktop.log")
        self._set("DBUS_SYSTEM_BUS_ADDRESS" if kind == "system" else "DBUS_SESSION_BUS_ADDRESS", address)

    def add_display(self, size="1280x800"):
        r, w = os.pipe()
        # -noreset: a server reset (when its last client leaves) would write the number again.
        self.spawn("display", ["Xvfb", "-displayfd", str(w), "-noreset", "-nolisten", "tcp", "-screen", "0", f"{size}x24"],
                   pass_fds=(w,))
        os.close(w)
        number = os.read(r, 32).decode().strip()
        # Kept open while Xvfb runs: with the reading end closed it dies ("Cannot write display number").
        self.pipes.append(r)
        if not number:
            raise RuntimeError(f"Xvfb printed no display number; see {self.dir}/desktop.log")
        self._set("DISPLAY", ":" + number)

    def add_accessibility(self):
        self.spawn("accessibility", ["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"])
        until(lambda: self.call("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress"), 30, "the accessibility bus")

    def start_dunst(self, config=None):
        """dunst on this desktop's bus and display (again, after a stop or a kill), with the tests'
        dunstrc or the one given (a picture's styled popups)."""
        if "display" not in self.procs:
            self.add_display("1280x800")
        conf = config or os.path.join(self.dir, "dunstrc")
        if not config:
            with open(conf, "w") as f:
                f.write(DUNSTRC)
        p = self.spawn("dunst", ["dunst", "-config", conf])
        until(lambda: self.has_owner("org.freedesktop.Notifications"), 30, "dunst")
        return p.pid

    def add_sound(self):
        native = os.path.join(self.dir, "pulse", "native")
        os.makedirs(os.path.dirname(native), exist_ok=True)
        client = os.path.join(self.dir, "pulse", "client.conf")
        with open(client, "w") as f:
            f.write("autospawn = no\n")
        home = os.path.join(self.dir, "pulse")
        server_env = dict(self.env, HOME=home, XDG_RUNTIME_DIR=home, XDG_CONFIG_HOME=home + "/config",
                          XDG_STATE_HOME=home + "/state", DBUS_SESSION_BUS_ADDRESS="disabled:")
        self.spawn("sound", ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
                             "--log-target=stderr",
                             "-L", f"module-null-sink sink_name={SINK} rate={RATE} channels=2 format=float32le",
                             "-L", f"module-native-protocol-unix auth-anonymous=1 socket={native}"], env=server_env)
        self._set("PULSE_SERVER", "unix:" + native)
        self._set("PULSE_CLIENTCONFIG", client)
        until(lambda: subprocess.run(["pactl", "info"], env=self.env, capture_output=True).returncode == 0, 30, "pulseaudio")
        # Silence plays all the time, so the monitor's recording runs in real time between sounds. An
        # idle null sink sleeps up to 2 s before it notices its first stream: the desktop is ready once
        # its monitor delivers, i.e. once the sink runs.
        self.spawn("silence", ["pacat", "--playback", "--raw", "--format=float32le", f"--rate={RATE}", "--channels=2",
                               "--latency-msec=20", "/dev/zero"])
        probe = subprocess.Popen(["parec", "-d", f"{SINK}.monitor", "--raw", "--format=float32le", f"--rate={RATE}", "--channels=1",
                                  "--latency-msec=5"], env=self.env, stdout=subprocess.PIPE, stderr=self.log)
        try:
            until(lambda: probe.stdout.read(4), 30, "the null sink's monitor")
        finally:
            probe.kill()
            probe.wait()

    # MARK: asking the bus

    def call(self, dest, path, method, *args):
        r = subprocess.run(["dbus-send", "--session", "--print-reply", f"--dest={dest}", path, method, *args],
                           env=self.env, capture_output=True, text=True, timeout=10)
        return r.stdout if r.returncode == 0 else None

    def has_owner(self, name):
        out = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}")
        return out is not None and "boolean true" in out


def parse(arguments):
    """PARTS of the command line as Desktop's arguments, and what follows `--`."""
    parts = dict(bus=True)
    rest = []
    i = 0
    while i < len(arguments):
        a = arguments[i]
        if a == "--":
            rest = arguments[i + 1:]
            break
        if a == "--display":
            size = arguments[i + 1] if i + 1 < len(arguments) and "x" in arguments[i + 1] and arguments[i + 1][0].isdigit() else None
            parts["display"] = size or "1280x800"
            i += 1 if size is None else 2
            continue
        if a in ("--services", "--dir"):
            parts["services" if a == "--services" else "directory"] = arguments[i + 1]
            i += 2
            continue
        if a == "--wait":
            parts["wait"] = float(arguments[i + 1])
            i += 2
            continue
        flag = {"--accessibility": "accessibility", "--dunst": "dunst", "--sound": "sound", "--system-bus": "system_bus"}.get(a)
        if flag:
            parts[flag] = True
        elif a == "--no-bus":
            parts["bus"] = False
        else:
            raise SystemExit(f"testdesktop.py: unknown option {a}")
        i += 1
    return parts, rest


def shell_line(answer):
    """An answer as one line a shell evaluates: the desktop's variables exported, an error said."""
    def quoted(text):
        return "'" + str(text).replace("'", "'\\''") + "'"
    words = [f"export {key}={quoted(value)};" for key, value in answer["env"].items()]
    words.append(f"CHIME_DESKTOP_DIR={quoted(answer['directory'])};")
    words += [f"CHIME_DESKTOP_PID_{name.replace('-', '_').upper()}={pid};" for name, pid in answer["pids"].items()]
    if "error" in answer:
        words.append(f"echo {quoted('testdesktop.py: ' + answer['error'])} >&2; false")
    return " ".join(words)


def serve(desktop, shell=False):
    """One line describing the desktop (JSON, or with `shell` a line a shell evaluates), then one
    command a line until `quit` or the end of stdin, each answered the same way."""
    def stop(*_):
        desktop.stop()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    say = shell_line if shell else json.dumps
    print(say(desktop.describe()), flush=True)
    for line in sys.stdin:
        words = line.split()
        answer = {}
        try:
            if words == ["quit"]:
                break
            if len(words) in (2, 3) and words[1] == "dunst" and words[0] in ("start", "stop", "kill"):
                if words[0] == "start":
                    answer["pid"] = desktop.start_dunst(words[2] if len(words) == 3 else None)
                else:
                    desktop.stop_part("dunst", signal.SIGKILL if words[0] == "kill" else signal.SIGTERM)
            else:
                answer["error"] = f"unknown command: {line.strip()}"
        except Exception as error:  # said to the caller, the desktop kept
            answer["error"] = str(error)
        answer.update(desktop.describe())
        print(say(answer), flush=True)
    desktop.stop()


def main(argv):
    if len(argv) < 2 or argv[1] not in ("run", "serve"):
        raise SystemExit(__doc__)
    shell = "--shell" in argv[2:]
    parts, command = parse([a for a in argv[2:] if a != "--shell"])
    desktop = Desktop(**parts)
    try:
        desktop.start()
    except Exception as error:
        raise SystemExit(f"testdesktop.py: the desktop did not start: {error}")
    if argv[1] == "serve":
        serve(desktop, shell)
        return 0
    if not command:
        desktop.stop()
        raise SystemExit("testdesktop.py run: give the command after --")
    try:
        return subprocess.run(command, env=desktop.env).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        desktop.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
