#!/usr/bin/python3
"""python-dateutil on the random recurrences chime-bench-nextfire wrote: the time it takes to find
each rule's next occurrence after November 2026, and whether it finds the same one chime did.

Usage: rrule_dateutil.py RULES_FILE [COUNT]
Prints "dateutil_seconds rules compared agreed", and up to five disagreements on stderr.

Not compared: a rule dateutil stops on (its own errors, or a search longer than 0.25 s, which is
counted in the time), a BYDAY that mixes ordinals and weekdays (dateutil reads a mix as days that
are both, RFC 5545 as days that are either), a COUNT rule whose DTSTART it does not match (RFC 5545
leaves that undefined), an occurrence in a DST gap or overlap (dateutil reads those its own way), and
one after 2037, where dateutil keeps the zone's last recorded offset and chime follows the zone's
rule for the years after its table (a TZif file's footer).
"""
import re
import signal
import sys
import time
from datetime import datetime, timezone

from dateutil import tz
from dateutil.rrule import rrulestr

BASE = datetime.fromtimestamp(1_795_000_000, tz=timezone.utc)


class Slow(Exception):
    pass


def slow(*_):
    raise Slow()


def main():
    path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    lines = open(path).read().splitlines()[:limit]
    signal.signal(signal.SIGALRM, slow)
    spent = 0.0
    compared = agreed = 0
    shown = 0
    for line in lines:
        zone_name, start_text, rule_text, ours = line.split(" ")
        zone = tz.gettz(zone_name)
        start = datetime.strptime(start_text, "%Y%m%dT%H%M%S").replace(tzinfo=zone)
        signal.setitimer(signal.ITIMER_REAL, 0.25)
        t0 = time.perf_counter()
        try:
            rule = rrulestr(rule_text, dtstart=start)
            theirs = rule.after(BASE)
            if theirs is None and start > BASE:
                theirs = start
        except (Slow, ValueError, IndexError):
            theirs = "failed"
        spent += time.perf_counter() - t0
        signal.setitimer(signal.ITIMER_REAL, 0)
        if theirs == "failed":
            continue
        byday = re.search(r"BYDAY=([^;]*)", rule_text)
        if byday:
            entries = byday.group(1).split(",")
            if any(e[:-2] for e in entries) and any(not e[:-2] for e in entries):
                continue
        if "COUNT=" in rule_text and not any(t == start for t in rrulestr(rule_text, dtstart=start)[:1]):
            continue
        if theirs is not None and (not tz.datetime_exists(theirs) or tz.datetime_ambiguous(theirs) or theirs.year > 2037):
            continue
        # DTSTART is an occurrence (RFC 5545) even where the rule does not match it.
        if start > BASE and (theirs is None or start < theirs):
            theirs = start
        compared += 1
        expected = "none" if theirs is None else str(int(theirs.timestamp()))
        if expected == ours:
            agreed += 1
        elif shown < 5:
            print(f"differs: {line} (dateutil: {expected})", file=sys.stderr)
            shown += 1
    print(f"{spent:.3f} {len(lines)} {compared} {agreed}")


main()
