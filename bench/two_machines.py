#!/usr/bin/python3
"""One alarm, two machines (issue 37): how fast an alarm and its answer travel through a CalDAV server.

Debian's radicale on loopback holds one calendar; two homes (each its own desktop: a session bus,
a notification server that only replies, a sound player that stands in for the real one, a vdir
and a vdirsyncer configuration for the calendar, and a chime daemon whose alarm file follows the
vdir with write = true, sync = vdirsyncer, sync-interval = 10 s). ROUNDS times:
  - known: a one-off due 15 s ahead is set on A (`chime at --calendar`); from then until B's
    `chime list` has it (A syncs at once; B at its interval, or every few seconds from a minute
    before one of its alarms is due);
  - silence: once both ring it, `chime stop` on A; from then until B no longer rings it (A writes
    the answer and syncs at once; B syncs every few seconds while an alarm of its calendar rings).
    The issue's target: within 10 s.
Each wait is bounded (LIMIT seconds): what did not happen within it is reported as missing.

    two_machines.py CHIME TRIVIAL_SERVER [ROUNDS]     prints one JSON object
"""

import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import testdesktop  # noqa: E402

CHIME, SERVER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 20
LIMIT = float(os.environ.get("LIMIT", "60"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url):
    request = urllib.request.Request(url, method=method)
    request.add_header("Authorization", "Basic " + base64.b64encode(b"alice:x").decode())
    try:
        return urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as error:
        return error.code


class Home:
    def __init__(self, name, work, url, procs):
        self.name = name
        self.dir = os.path.join(work, name)
        vdir = os.path.join(self.dir, "calendars", "shared")
        os.makedirs(vdir)
        players = os.path.join(self.dir, "bin")
        os.makedirs(players)
        player = os.path.join(players, "canberra-gtk-play")
        with open(player, "w") as f:
            f.write("#!/bin/sh\nsleep 0.3\n")
        os.chmod(player, 0o755)
        env = dict(os.environ, HOME=self.dir, XDG_RUNTIME_DIR=self.dir, XDG_CONFIG_HOME=os.path.join(self.dir, "config"),
                   XDG_STATE_HOME=os.path.join(self.dir, "state"), PATH=players + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        config = os.path.join(self.dir, "vdirsyncer.conf")
        with open(config, "w") as f:
            f.write(f'[general]\nstatus_path = "{self.dir}/status/"\n[pair shared]\na = "local"\nb = "remote"\n'
                    f'collections = null\nconflict_resolution = "b wins"\n'
                    f'[storage local]\ntype = "filesystem"\npath = "{vdir}/"\nfileext = ".ics"\n'
                    f'[storage remote]\ntype = "caldav"\nurl = "{url}"\nusername = "alice"\npassword = "x"\n')
        subprocess.run(["/usr/bin/vdirsyncer", "-c", config, "discover"], env=env, check=True, capture_output=True, timeout=120)
        alarms = os.path.join(self.dir, "alarms.toml")
        with open(alarms, "w") as f:
            f.write(f'[[calendar]]\npath = "{vdir}"\nlabel = "shared"\nwrite = true\n'
                    f'sync = ["/usr/bin/vdirsyncer", "-c", "{config}", "sync"]\nsync-interval = "10s"\n')
        self.desktop = testdesktop.Desktop(env=env, directory=os.path.join(self.dir, "desktop")).start()
        self.env = self.desktop.env
        log = open(os.path.join(self.dir, "log"), "w")
        procs.append(subprocess.Popen([SERVER], env=self.env, stdout=log, stderr=log))
        procs.append(subprocess.Popen([CHIME, "daemon", "--config", alarms, "--state-dir", os.path.join(self.dir, "chime")],
                                      env=self.env, stderr=log))
        testdesktop.until(lambda: self.chime("status").returncode == 0, LIMIT, f"{name}'s daemon")

    def chime(self, *arguments):
        return subprocess.run([CHIME, *arguments], env=self.env, capture_output=True, text=True, timeout=60)

    def pending(self):
        return {item["id"] for item in json.loads(self.chime("list", "--json").stdout or "[]")}

    def ringing(self):
        return {item["id"] for item in json.loads(self.chime("list", "--ringing", "--json").stdout or "[]")}


def wait(check, limit=LIMIT):
    """Seconds until check() holds (polled every 50 ms), or None past `limit`."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if check():
            return time.monotonic() - started
        time.sleep(0.05)
    return None


def main():
    work = tempfile.mkdtemp(prefix="chime-bench-two-machines-")
    procs = []
    homes = []
    result = {"rounds": ROUNDS, "known": [], "silence": [], "missing": []}
    try:
        port = free_port()
        os.makedirs(os.path.join(work, "store"))
        radicale_log = open(os.path.join(work, "radicale.log"), "w")
        procs.append(subprocess.Popen(["/usr/bin/radicale", "--storage-filesystem-folder", os.path.join(work, "store"),
                                       "--server-hosts", f"127.0.0.1:{port}", "--auth-type", "none", "--rights-type", "authenticated",
                                       "--logging-level", "warning"], stdout=radicale_log, stderr=radicale_log))
        url = f"http://127.0.0.1:{port}/alice/shared/"
        testdesktop.until(lambda: http("PROPFIND", f"http://127.0.0.1:{port}/") < 500, 30, "radicale")
        if http("MKCALENDAR", url) != 201:
            raise SystemExit("two_machines.py: radicale made no calendar")
        homes = [Home("a", work, url, procs), Home("b", work, url, procs)]
        a, b = homes
        # An event that stays (vdirsyncer does not sync a calendar emptied on one side).
        a.chime("at", "06:30", "--days", "sat", "--calendar", "shared", "--id", "gym", "Gym")
        for round in range(ROUNDS):
            name = f"round{round}"
            due = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + 15))
            set_at = time.monotonic()
            added = a.chime("at", due, "--calendar", "shared", "--id", name, "--sound", "bell", "--ring", "5m", "Round")
            if added.returncode != 0:
                raise SystemExit(f"two_machines.py: chime at: {added.stderr}")
            known = wait(lambda: name in b.pending())
            if known is None:
                result["missing"].append(f"{name}: B never learned of it")
                continue
            result["known"].append(round_to(time.monotonic() - set_at))
            if wait(lambda: name in a.ringing() and name in b.ringing(), 15 + LIMIT) is None:
                result["missing"].append(f"{name}: it did not ring on both")
                continue
            stopped = time.monotonic()
            a.chime("stop", name)
            if wait(lambda: name not in b.ringing()) is None:
                result["missing"].append(f"{name}: B rang on")
                continue
            result["silence"].append(round_to(time.monotonic() - stopped))
            b.chime("stop")
        print(json.dumps(result))
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for home in homes:
            home.desktop.stop()
        subprocess.run(["rm", "-rf", work])


def round_to(seconds):
    return round(seconds, 2)


if __name__ == "__main__":
    main()
