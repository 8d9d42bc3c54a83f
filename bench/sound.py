#!/usr/bin/python3
"""An alarm's sound: from its due time to its first sample at the sound server's sink.

The one test desktop (scripts/testdesktop.py): Xvfb (canberra-gtk-play needs a display), a session
bus, PulseAudio with a null sink (no sound card) kept running by a silent stream; in it a notification
server that only replies (bench/c/trivial_server.c), and the sink's monitor recorded by parec in 5 ms chunks, each stamped
with the monotonic time it arrived. The same short tone (full amplitude from its first sample) is
played three ways, round-robin, each at a due time chosen ahead:
  - chime: an alarm added to the chime daemon (D-Bus `Add` with `at` and `sound-file`), which
    plays it itself through the sound server (its popup sent first, as always);
  - paplay and canberra-gtk-play: started with posix_spawn at the due time, the way chime started
    its player programs before it played sounds itself.
The latency is the arrival of the chunk holding the first loud sample minus the due time (the
recorder's own few milliseconds are in every figure alike). The daemon's very first sound is measured
on its own before the rounds: the daemon loads libsndfile and libpulse and connects to the server
only then. Then the daemon's memory (VmRSS): idle before any sound (nothing loaded), idle once
connected, while an alarm rings (looping), idle after the ring, and idle when started with
--no-sound-server.

    sound.py CHIME TRIVIAL_SERVER [ROUNDS]     prints one JSON object
"""

import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import testdesktop  # noqa: E402

CHIME, SERVER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
RATE = testdesktop.RATE
GAP = 0.6  # seconds between two sounds: the tone and the slowest start fit well within it


class Recorder:
    """parec on the monitor: float32 mono samples, each chunk stamped with its arrival."""

    def __init__(self, env):
        self.proc = subprocess.Popen(["parec", "-d", f"{testdesktop.SINK}.monitor", "--raw", "--format=float32le", f"--rate={RATE}",
                                      "--channels=1", "--latency-msec=5"], env=env, stdout=subprocess.PIPE)
        self.samples = bytearray()
        self.stamps = []  # (index of the chunk's first sample, arrival)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            now = time.monotonic()
            if not chunk:
                return
            with self.lock:
                self.stamps.append((len(self.samples) // 4, now))
                self.samples += chunk

    def first_loud_after(self, t, threshold=0.05):
        """Arrival of the chunk holding the first sample louder than threshold among those that arrived after t."""
        with self.lock:
            stamps = list(self.stamps)
            data = bytes(self.samples[: len(self.samples) // 4 * 4])
        count = len(data) // 4
        values = struct.unpack(f"<{count}f", data)
        for i, (start, arrived) in enumerate(stamps):
            if arrived < t:
                continue
            end = stamps[i + 1][0] if i + 1 < len(stamps) else count
            if any(abs(v) > threshold for v in values[start:end]):
                return arrived
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise SystemExit(f"sound.py: {what} did not come up within {timeout} s")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def main():
    work = tempfile.mkdtemp(prefix="chime-bench-sound-")
    procs = []
    env = dict(os.environ, HOME=work, XDG_RUNTIME_DIR=work, XDG_CONFIG_HOME=os.path.join(work, "config"),
               XDG_STATE_HOME=os.path.join(work, "state"))
    log = open(os.path.join(work, "session.log"), "w")
    desktop = None
    try:
        desktop = testdesktop.Desktop(display="1280x800", sound=True, env=env, directory=os.path.join(work, "desktop")).start()
        env = desktop.env
        procs.append(subprocess.Popen([SERVER], env=env, stdout=log, stderr=log))
        tone = os.path.join(work, "tone.wav")
        frames = int(0.15 * RATE)
        data = struct.pack(f"<{frames}h", *(int(16000 * math.sin(2 * math.pi * i / 100)) if i % 100 else 16000 for i in range(frames)))
        with open(tone, "wb") as f:
            f.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, RATE, RATE * 2, 2, 16)
                    + b"data" + struct.pack("<I", len(data)) + data)
        recorder = Recorder(env)
        # An idle null sink sleeps up to 2 s before it notices its first stream (a sound card's sink
        # does not): measuring starts once its monitor delivers, i.e. once the sink runs.
        until(lambda: len(recorder.samples) > RATE // 10 * 4, 5, "the null sink's monitor")
        daemon = subprocess.Popen([CHIME, "daemon", "--no-config", "--state-dir", os.path.join(work, "chime")], env=env, stderr=log)
        procs.append(daemon)
        until(lambda: subprocess.run([CHIME, "list"], env=env, capture_output=True).returncode == 0, 10, "the chime daemon")
        time.sleep(0.5)
        untried_rss = rss_kib(daemon.pid)

        def add(at, extra=""):
            subprocess.run(["gdbus", "call", "--session", "--dest", "org.chime.Scheduler", "--object-path", "/org/chime/Scheduler",
                            "--method", "org.chime.Scheduler1.Add",
                            f"{{'title': <'bench'>, 'at': <{at!r}>, 'sound-file': <'{tone}'>{extra}}}"],
                           env=env, check=True, capture_output=True)

        # The daemon's first sound: the sound libraries are loaded and the server connected then.
        offset = time.time() - time.monotonic()
        due_wall = time.time() + GAP
        add(due_wall)
        time.sleep(max(0, due_wall - offset - time.monotonic()) + GAP * 0.9)
        arrived = recorder.first_loud_after(due_wall - offset - 0.002)
        first_ms = None if arrived is None else round((arrived - (due_wall - offset)) * 1000, 2)
        until(lambda: "through the sound server" in subprocess.run([CHIME, "status"], env=env, capture_output=True, text=True).stdout,
              10, "the chime daemon's sound")
        time.sleep(0.5)
        idle_rss = rss_kib(daemon.pid)

        players = {"paplay": ["/usr/bin/paplay", tone], "canberra-gtk-play": ["/usr/bin/canberra-gtk-play", "-f", tone]}
        results = {"chime": [], "paplay": [], "canberra-gtk-play": []}
        failed = {name: 0 for name in results}
        for _ in range(ROUNDS):
            for name in results:
                offset = time.time() - time.monotonic()
                due_wall = time.time() + GAP
                due = due_wall - offset
                if name == "chime":
                    add(due_wall)
                    time.sleep(max(0, due - time.monotonic()))
                else:
                    time.sleep(max(0, due - time.monotonic()))
                    pid = os.posix_spawn(players[name][0], players[name], env)
                    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True).start()
                time.sleep(GAP * 0.9)
                arrived = recorder.first_loud_after(due - 0.002)
                if arrived is None or arrived - due > GAP:
                    failed[name] += 1
                    print(f"sound.py: {name}: no sound within {GAP} s of its due time"
                          + ("" if arrived is None else f" (first at {arrived - due:.3f} s)"), file=sys.stderr)
                else:
                    results[name].append((arrived - due) * 1000)
        # Memory while an alarm rings (looping) and after it.
        due_wall = time.time() + 0.5
        add(due_wall, ", 'ring': <uint32 4>")
        time.sleep(2.5)
        ringing_rss = rss_kib(daemon.pid)
        time.sleep(5)
        after_rss = rss_kib(daemon.pid)
        recorder.stop()
        # The same daemon without chime's own player (--no-sound-server): what libpulse costs idle.
        daemon.terminate()
        daemon.wait()
        plain = subprocess.Popen([CHIME, "daemon", "--no-config", "--no-sound-server", "--state-dir", os.path.join(work, "chime")],
                                 env=env, stderr=log)
        procs.append(plain)
        until(lambda: subprocess.run([CHIME, "list"], env=env, capture_output=True).returncode == 0, 10, "the chime daemon")
        time.sleep(1)
        plain_rss = rss_kib(plain.pid)
        if os.environ.get("SOUND_BENCH_LOG"):
            print(json.dumps(results), file=sys.stderr)
        summary = {name: {"n": len(v), "failed": failed[name], "p50_ms": round(percentile(v, 50), 2), "p99_ms": round(percentile(v, 99), 2),
                          "min_ms": round(min(v), 2), "max_ms": round(max(v), 2)} if v else {"n": 0, "failed": failed[name]}
                   for name, v in results.items()}
        summary["memory_kib"] = {"idle_before_any_sound": untried_rss, "idle": idle_rss, "ringing": ringing_rss, "after": after_rss,
                                 "idle_without_sound_server": plain_rss}
        summary["first_sound_ms"] = first_ms
        summary["rounds"] = ROUNDS
        print(json.dumps(summary))
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if desktop:
            desktop.stop()
        if os.environ.get("SOUND_BENCH_LOG"):
            sys.stderr.write(open(os.path.join(work, "session.log")).read())
        shutil.rmtree(work, ignore_errors=True)


main()
