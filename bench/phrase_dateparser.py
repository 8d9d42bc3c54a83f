#!/usr/bin/python3
"""`make bench`: python's dateparser (Debian's python3-dateparser) on the one-off phrases chime read.

Usage: phrase_dateparser.py FILE COUNT, FILE as chime-bench-nextfire's phrase mode writes it
("UNIX_TIME<TAB>PHRASE": what chime read each phrase as, said at 1795000000 in Europe/Berlin).
Prints "SECONDS TRIED READ AGREED": the time dateparser.parse took for TRIED phrases, how many it
read at all, and how many it read as the same moment as chime (to the minute: dateparser leaves
the seconds of "now + 3 hours" as they were, as chime does).
"""
import datetime
import sys
import time
import zoneinfo

import dateparser

BASE = 1795000000
ZONE = zoneinfo.ZoneInfo("Europe/Berlin")


def main() -> None:
    path, count = sys.argv[1], int(sys.argv[2])
    rows = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            when, phrase = line.rstrip("\n").split("\t", 1)
            rows.append((int(when), phrase))
    rows = rows[:count]
    said = datetime.datetime.fromtimestamp(BASE, ZONE).replace(tzinfo=None)
    settings = {
        "RELATIVE_BASE": said,
        "PREFER_DATES_FROM": "future",
        "TIMEZONE": "Europe/Berlin",
        "RETURN_AS_TIMEZONE_AWARE": True,
    }
    # The first call loads dateparser's language data: not what is timed.
    dateparser.parse("tomorrow 7am", languages=["en", "de"], settings=settings)
    read = agreed = 0
    started = time.perf_counter()
    answers = [dateparser.parse(phrase, languages=["en", "de"], settings=settings) for _, phrase in rows]
    spent = time.perf_counter() - started
    for (when, _), answer in zip(rows, answers):
        if answer is None:
            continue
        read += 1
        if int(answer.timestamp()) // 60 == when // 60:
            agreed += 1
    print(spent, len(rows), read, agreed)


if __name__ == "__main__":
    main()
