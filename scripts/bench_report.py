"""Summarises bench/out/ as ratios against the peers and the targets of the issue."""
import json
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])


def read_whole(name):
    rows = {}
    for line in (out / name).read_text().splitlines():
        label, median, p90, rss = line.split()
        rows[label] = (float(median), float(p90), int(rss))
    return rows


def verdict(ok):
    return "meets target" if ok else "MISSES target"


lines = []
runs = {"raw": [], "chime": []}
for line in (out / "inprocess.txt").read_text().splitlines():
    label, median, p99, throughput, _ = line.split()
    runs[label].append((float(median), float(p99), float(throughput)))
raw = [statistics.median(column) for column in zip(*runs["raw"])]
ours = [statistics.median(column) for column in zip(*runs["chime"])]
lines.append("In-process Notify against a server that only replies (median of %d alternated runs):" % len(runs["raw"]))
lines.append("  %-28s %12s %12s %14s" % ("", "median µs", "p99 µs", "calls/s"))
lines.append("  %-28s %12.1f %12.1f %14.0f" % ("raw libdbus (C)", *raw))
lines.append("  %-28s %12.1f %12.1f %14.0f" % ("chime dbus layer (Swift)", *ours))
latency = ours[0] / raw[0]
throughput = ours[2] / raw[2]
lines.append("  latency ratio    %.2f× raw libdbus (target ≤ 1.10×): %s" % (latency, verdict(latency <= 1.10)))
lines.append("  throughput ratio %.2f× raw libdbus (target ≥ 0.90×): %s" % (throughput, verdict(throughput >= 0.90)))

for name, title in (("whole-trivial.txt", "a server that only replies"), ("whole-dunst.txt", "dunst under Xvfb")):
    rows = read_whole(name)
    lines.append("")
    lines.append("Whole process against %s (alternated runs):" % title)
    lines.append("  %-14s %12s %12s %14s" % ("", "median ms", "p90 ms", "peak RSS KiB"))
    for label, (median, p90, rss) in rows.items():
        lines.append("  %-14s %12.2f %12.2f %14d" % (label, median, p90, rss))
    send = rows["notify-send"]
    # "chime" is make release (no PIE); "chime-shipped" what make install and make deb ship (PIE);
    # "as-notify-send" the shipped chime started by a notify-send link (issue 25's targets for all).
    for label in ("chime", "chime-shipped", "as-notify-send"):
        if label not in rows:
            continue
        chime = rows[label]
        ratio = chime[0] / send[0]
        lines.append("  %s / notify-send wall %.2f× (target ≤ 0.40×): %s" % (label, ratio, verdict(ratio <= 0.40)))
        rss = chime[2] / send[2]
        lines.append("  %s / notify-send peak RSS %.2f× (target ≤ 1.20×): %s" % (label, rss, verdict(rss <= 1.20)))
        if "gdbus" in rows:
            lines.append("  %s / gdbus wall %.2f×" % (label, chime[0] / rows["gdbus"][0]))
        if "dbus-send" in rows:
            ratio = chime[0] / rows["dbus-send"][0]
            lines.append("  %s / dbus-send wall %.2f× (target ≤ 1.00×): %s" % (label, ratio, verdict(ratio <= 1.00)))
    if "swift-hello" in rows:
        lines.append("  (a static Swift hello world, linked like chime, takes %.2f ms: the floor for any Swift CLI)" % rows["swift-hello"][0])

runs = [list(map(float, line.split())) for line in (out / "nextfire.txt").read_text().splitlines()]
parse, nxt, near, far = (statistics.median(column) for column in list(zip(*runs))[:4])
lines.append("")
lines.append("Calendar rules (median of %d runs):" % len(runs))
lines.append("  nextFireDate for 100,000 random rules: %.3f s (target ≤ 0.5 s): %s" % (nxt, verdict(nxt <= 0.5)))
lines.append("  parsing those 100,000 rules: %.3f s" % parse)
lines.append("  one rule firing a day ahead: %.2f µs; one firing in 2090: %.2f µs" % (near, far))

runs = [list(map(float, line.split())) for line in (out / "rrule.txt").read_text().splitlines()]
parse, nxt, without = (statistics.median(column) for column in list(zip(*runs))[:3])
spent, tried, compared, agreed = map(float, (out / "rrule-dateutil.txt").read_text().split())
lines.append("")
lines.append("iCalendar recurrences, every frequency and BY part, started 2015-2026 in five zones (median of %d runs):" % len(runs))
lines.append("  next occurrence after November 2026 of 100,000 random rules: %.3f s (target < 0.5 s): %s" % (nxt, verdict(nxt < 0.5)))
lines.append("  (%d of them never fire again: COUNT or UNTIL has ended them, or their parts exclude each other)" % without)
lines.append("  reading those 100,000 rules: %.3f s, %.2f µs a rule (target < 3 µs): %s" % (parse, parse / 1e5 * 1e6, verdict(parse / 1e5 < 3e-6)))
lines.append("  python-dateutil's rrule.after() on %d of the same rules: %.1f ms a rule (searches cut at 0.25 s), chime %.2f µs: %.0f× faster"
             % (tried, spent / tried * 1e3, nxt / 1e5 * 1e6, (spent / tried) / (nxt / 1e5)))
lines.append("  the same next occurrence as dateutil for %d of %d rules compared (%s)" % (agreed, compared, verdict(agreed == compared)))

runs = [list(map(float, line.split())) for line in (out / "phrase.txt").read_text().splitlines()]
phrase, calendar, unread = (statistics.median(column) for column in list(zip(*runs))[:3])
spent, tried, read, agreed = map(float, (out / "phrase-dateparser.txt").read_text().split())
lines.append("")
lines.append("Phrases, English and German, once and repeating (100,000 random ones, median of %d runs):" % len(runs))
lines.append("  reading a phrase and its first time: %.2f µs (target < 50 µs): %s; a calendar expression's parse beside it: %.2f µs (%.1f×)"
             % (phrase, verdict(phrase < 50), calendar, phrase / calendar))
lines.append("  phrases chime could not read: %d (%s)" % (unread, verdict(unread == 0)))
for line in (out / "languages.txt").read_text().splitlines():
    language, four, one, missed = line.split()
    lines.append("  a phrase in %s: %.2f µs with the four languages read, %.2f µs with %s alone (%.2f×; target < 25 µs either way: %s)%s"
                 % (language, float(four), float(one), language, float(four) / float(one), verdict(max(float(four), float(one)) < 25),
                    "" if missed == "0" else "; %s not read" % missed))
lines.append("  python's dateparser on %d of the one-off phrases: %.0f µs a phrase, chime %.2f µs: %.0f× faster; it read %d, %d as the same minute as chime"
             % (tried, spent / tried * 1e6, phrase, (spent / tried * 1e6) / phrase, read, agreed))

runs = [list(map(float, line.split())) for line in (out / "holidays.txt").read_text().splitlines()]
read_ms, plan_ms, plain_ms, ten_ms, days_off = (statistics.median(column) for column in list(zip(*runs))[:5])
lines.append("")
lines.append("Days off: 10,000 weekday alarms in three zones, each skipping or moving off the days off of three holiday calendars")
lines.append("(public holidays as yearly rules and one-offs, school holidays as ranges, bridge days: %d days off in 11 years; median of %d runs):" % (days_off, len(runs)))
lines.append("  reading the three calendars %.1f ms, planning every alarm's next occurrence %.1f ms: %.1f ms (target < 500 ms): %s"
             % (read_ms, plan_ms, read_ms + plan_ms, verdict(read_ms + plan_ms < 500)))
lines.append("  the same alarms planned without days off: %.1f ms (days off cost %.1f×); the ten occurrences after each: %.2f µs an occurrence"
             % (plain_ms, plan_ms / plain_ms, ten_ms / 1e5 * 1e3))

two = json.loads((out / "two-machines.json").read_text())
lines.append("")
lines.append("One alarm, two machines (radicale on loopback, vdirsyncer, B syncing every 10 s; %d rounds):" % two["rounds"])
if two["known"]:
    lines.append("  set on A → known on B: median %.1f s, worst %.1f s (B's sync interval bounds it)"
                 % (statistics.median(two["known"]), max(two["known"])))
if two["silence"]:
    worst = max(two["silence"])
    lines.append("  Stop on A → silence on B: median %.1f s, worst %.1f s (target: within 10 s): %s"
                 % (statistics.median(two["silence"]), worst, verdict(worst <= 10 and not two["missing"])))
for missing in two["missing"]:
    lines.append("  missing: " + missing)

check_ms, check_tests = (int(v) for v in (out / "check.txt").read_text().split())
lines.append("")
lines.append("The quick loop, make check with its tests built: %.1f s for %d tests (target < 30 s): %s"
             % (check_ms / 1000, check_tests, verdict(check_ms < 30_000)))

simulated = (out / "simulate.txt").read_text().strip() if (out / "simulate.txt").exists() else ""
lines.append("")
match = re.match(r"(\d+) seeds of (\d+) simulated days passed in ([0-9.]+) s on (\d+) processes", simulated)
if match:
    seconds = float(match.group(3))
    lines.append("The daemon under the simulator: %s simulated months passed in %.1f s on %s cores (target: 10,000 in < 120 s): %s"
                 % (match.group(1), seconds, match.group(4), verdict(seconds < 120 and int(match.group(1)) >= 10_000)))
else:
    lines.append("The daemon under the simulator: FAILED (%s)" % (simulated or "no result"))

runs = [list(map(float, line.split())) for line in (out / "lateness.txt").read_text().splitlines()]
p50, p99 = (statistics.median(column) for column in list(zip(*runs))[:2])
worst = max(run[2] for run in runs)
lines.append("")
lines.append("Lateness, due time to the server receiving Notify, 200 alarms 5 ms apart (median of %d runs; max over all):" % len(runs))
lines.append("  runs (p50 / p99 / max ms): %s" % ", ".join("%.2f / %.2f / %.2f" % tuple(run[:3]) for run in runs))
lines.append("  p50 %.2f ms (target ≤ 1 ms): %s" % (p50, verdict(p50 <= 1.0)))
lines.append("  p99 %.2f ms (target ≤ 2 ms): %s" % (p99, verdict(p99 <= 2.0)))
lines.append("  max %.2f ms (target ≤ 10 ms): %s" % (worst, verdict(worst <= 10.0)))
if any(run[3] != 200 for run in runs):
    lines.append("  SOME ALARMS WERE NOT RECEIVED: %s" % [int(run[3]) for run in runs])

list50, list_max, in50, in_max = (float(v) for v in (out / "hung.txt").read_text().split())
lines.append("")
lines.append("A notification server that never answers Notify (one alarm's Notify hanging), whole process, 20 runs each:")
lines.append("  chime list: median %.1f ms, max %.1f ms (target ≤ 50 ms): %s" % (list50, list_max, verdict(list_max <= 50)))
lines.append("  chime in 1h: median %.1f ms, max %.1f ms (target ≤ 50 ms): %s" % (in50, in_max, verdict(in_max <= 50)))
slow50, slow_max, slow_received = (float(v) for v in (out / "slow.txt").read_text().split())
lines.append("")
lines.append("A notification server that answers each Notify 2 s late, 10 alarms 1 s apart (each due while the one before is unanswered):")
lines.append("  due time to the server's receipt: median %.2f ms, max %.2f ms (target ≤ 10 ms): %s" % (slow50, slow_max, verdict(slow_max <= 10)))
if slow_received != 10:
    lines.append("  SOME ALARMS WERE NOT RECEIVED: %d of 10" % slow_received)

startup, listing, add50, add99, rss, switches, _, startup_rss = (float(v) for v in (out / "daemon.txt").read_text().split())
lines.append("")
lines.append("The daemon with 100,000 pending alarms:")
lines.append("  start-up until it answers: %.2f s (target ≤ 0.5 s): %s" % (startup, verdict(startup <= 0.5)))
lines.append("  chime list --json: %.2f s (target < 0.5 s): %s" % (listing, verdict(listing < 0.5)))
lines.append("  add round trip, store write included: median %.2f ms, p99 %.2f ms (target median ≤ 1 ms): %s" % (add50, add99, verdict(add50 <= 1.0)))
lines.append("  peak RSS: %.0f MiB (target ≤ 64 MiB): %s; after start-up %.0f MiB" % (rss / 1024, verdict(rss / 1024 <= 64), startup_rss / 1024))
lines.append("  context switches while idle (voluntary + involuntary, /proc/PID/status): %d (target 0): %s" % (switches, verdict(switches == 0)))

load_median, load_min, parse_median, alarms, size = (float(v) for v in (out / "config-load.txt").read_text().split())
peer_median, peer_min = (float(v) for v in (out / "config-tomllib.txt").read_text().split())
first, unchanged, one, touched, total = (float(v) for v in (out / "config-reload.txt").read_text().split())
lines.append("")
lines.append("The alarm file, %d alarms (%.1f MB):" % (alarms, size / 1e6))
lines.append("  load and validate: median %.0f ms, fastest %.0f ms (target ≤ 200 ms): %s" % (load_median, load_min, verdict(load_median <= 200)))
lines.append("  of which TOML parsing (TOMLKit/toml++) about %.0f ms; Python's tomllib parses the same file in %.0f ms (%.2f× chime's whole load)"
             % (parse_median, peer_median, peer_median / load_median))
lines.append("  in the daemon: first load (every alarm written to the store) %.0f ms; reload of the unchanged file %.0f ms;" % (first, unchanged))
lines.append("  reload after one alarm changed %.0f ms, touching %d of %d stored alarms (target: only that one): %s"
             % (one, touched, total, verdict(touched == 1)))

import json  # noqa: E402

app = json.loads((out / "app.json").read_text())
for renderer, name in (("gl", "GTK's default renderer (GL; under Xvfb, Mesa's software rasterizer)"), ("cairo", "GSK_RENDERER=cairo")):
    r = app[renderer]
    ours, clocks, big = r["chime-alarms"], r["gnome-clocks"], r["chime-alarms-100000"]
    lines.append("")
    lines.append("The desktop app beside gnome-clocks 43, %d alarms each, under Xvfb, %s (median of %d alternated launches):"
                 % (app["alarms"], name, app["runs"]))
    lines.append("  launch → first frame: chime-alarms %.0f ms, gnome-clocks %.0f ms: %.2f× (target ≤ 1×, goal 0.5×): %s"
                 % (ours["first_frame_ms"], clocks["first_frame_ms"], r["ratio_first_frame"], verdict(r["ratio_first_frame"] <= 1)))
    lines.append("  memory 1 s after it (RSS): chime-alarms %.0f MiB, gnome-clocks %.0f MiB: %.2f× (target ≤ 1×, goal 0.5×): %s"
                 % (ours["rss_mib"], clocks["rss_mib"], r["ratio_rss"], verdict(r["ratio_rss"] <= 1)))
    lines.append("  100,000 alarms: launch → first frame of the list %.0f ms (median of %d; target < 0.5 s): %s; RSS %.0f MiB"
                 % (big["first_frame_ms"], len(big["first_frame_ms_all"]), verdict(big["first_frame_ms"] < 500), big["rss_mib"]))
    lines.append("  100,000 alarms scrolled (the wheel at 120/s for 3 s): %d frames, work median %.1f ms, longest %.1f ms; "
                 "frames over 16.7 ms (dropped at 60 Hz): %d (target 0): %s"
                 % (big["scroll_frames"], big["scroll_work_ms_median"], big["scroll_work_ms_max"],
                    big["scroll_frames_over_16_7_ms"], verdict(big["scroll_frames_over_16_7_ms"] == 0)))

sound = json.loads((out / "sound.json").read_text())
lines.append("")
lines.append("An alarm's sound, due time → first sample at the sink's monitor (PulseAudio null sink, parec in 5 ms chunks; %d rounds):"
             % sound["rounds"])
for name in ("chime", "paplay", "canberra-gtk-play"):
    r = sound[name]
    lines.append("  %-18s p50 %6.1f ms  p99 %6.1f ms  (%d measured, %d without sound)" % (name, r["p50_ms"], r["p99_ms"], r["n"], r["failed"]))
ours = sound["chime"]
fastest_peer = min(sound["paplay"]["p50_ms"], sound["canberra-gtk-play"]["p50_ms"])
lines.append("  chime p99 %.1f ms (goal < 30 ms): %s; p50 %.2f× the faster peer (goal < 1×): %s"
             % (ours["p99_ms"], verdict(ours["p99_ms"] < 30), ours["p50_ms"] / fastest_peer, verdict(ours["p50_ms"] < fastest_peer)))
first = sound["first_sound_ms"]
lines.append("  the daemon's first sound (libraries loaded and the server connected then): %s"
             % ("nothing heard" if first is None else "%.1f ms (goal < 30 ms): %s" % (first, verdict(first < 30))))
memory = sound["memory_kib"]
lines.append("  the daemon's RSS: idle before any sound %.1f MiB, connected %.1f MiB, ringing %.1f MiB, after ringing %.1f MiB;"
             % (memory["idle_before_any_sound"] / 1024, memory["idle"] / 1024, memory["ringing"] / 1024, memory["after"] / 1024))
lines.append("  idle with --no-sound-server %.1f MiB" % (memory["idle_without_sound_server"] / 1024))

big = json.loads((out / "big-calendar.json").read_text())
lines.append("A followed calendar of %d events (%.1f MiB) beside the alarms (issue 34's targets):" % (big["events"], big["bytes"] / 2**20))


def figure(value, unit, scale=1):
    return "not within the bench's limit" if value is None else "%.1f %s" % (value * scale, unit)


lines.append("  first answer after the start: %s (target < 100 ms: %s)"
             % (figure(big.get("answer_seconds"), "ms", 1000), verdict((big.get("answer_seconds") or 1e9) < 0.1)))
late = big.get("plain_late_ms")
lines.append("  a plain alarm due about 3 s after the start: %s (%s; target: on time: %s)"
             % ("%.1f ms late" % late if late is not None else big.get("plain", "did not fire"), big.get("plain_timeliness", "-"),
                verdict(big.get("plain_timeliness") == "on-time")))
lines.append("  all its alarms known: %s after the start (target < 3 s: %s)"
             % (figure(big.get("all_known_seconds"), "s"), verdict((big.get("all_known_seconds") or 1e9) < 3)))
lines.append("  an edit: known again after %s; the loop held at most %s (target < 10 ms: %s; the same pings with nothing to do: %s)"
             % (figure(big.get("edit_known_seconds"), "s"), figure(big.get("edit_longest_hold_ms"), "ms"),
                verdict((big.get("edit_longest_hold_ms") or 1e9) < 10), figure(big.get("idle_longest_hold_ms"), "ms")))
lines.append("  peak RSS: %s (target < 150 MiB: %s); its reader's (a child, gone once done): %s"
             % (figure(big.get("peak_rss_mib"), "MiB"), verdict((big.get("peak_rss_mib") or 1e9) < 150),
                figure(big.get("reader_peak_rss_mib"), "MiB")))

eds = json.loads((out / "eds-calendar.json").read_text())
lines.append("GNOME's calendar of %d events through Evolution Data Server (issue 47's targets; the vdir above is the peer):" % eds["events"])
lines.append("  first answer after the start: %s; a plain alarm due about 4 s after it: %s (%s: %s)"
             % (figure(eds.get("answer_seconds"), "ms", 1000),
                "%.1f ms late" % eds["plain_late_ms"] if eds.get("plain_late_ms") is not None else "did not fire",
                eds.get("plain_timeliness", "-"), verdict(eds.get("plain_timeliness") == "on-time")))
lines.append("  all its alarms known, first start: %s (target < 3 s: %s); chime-eds through it once: %s; at a restart: %s"
             % (figure(eds.get("first_all_known_seconds"), "s"), verdict((eds.get("first_all_known_seconds") or 1e9) < 3),
                figure(eds.get("first_followed_live_seconds"), "s"), figure(eds.get("restart_all_known_seconds"), "s")))
lines.append("  the loop held at most %s meanwhile (target < 10 ms: %s); during the changes %s"
             % (figure(eds.get("first_longest_hold_ms"), "ms"), verdict((eds.get("first_longest_hold_ms") or 1e9) < 10),
                figure(eds.get("change_longest_hold_ms"), "ms")))
lines.append("  an event moved in EDS → its alarm moved: median %s, worst %s (%s rounds known; target < 2 s: %s)"
             % (figure(eds.get("change_known_median_seconds"), "s"), figure(eds.get("change_known_worst_seconds"), "s"),
                eds.get("change_rounds_known", "no"), verdict((eds.get("change_known_worst_seconds") or 1e9) < 2)))
lines.append("  peak RSS: the daemon %s (the vdir's: %s); chime-eds %s (first start), %s (restart)"
             % (figure(eds.get("daemon_peak_rss_mib"), "MiB"), figure(big.get("peak_rss_mib"), "MiB"),
                figure(eds.get("first_child_peak_rss_mib"), "MiB"), figure(eds.get("restart_child_peak_rss_mib"), "MiB")))

report = "\n".join(lines)
print(report)
(out / "report.txt").write_text(report + "\n")
