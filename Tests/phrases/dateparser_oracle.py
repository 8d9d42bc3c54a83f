#!/usr/bin/python3
"""An independent reading of the corpus's one-off phrases: python's dateparser (Debian's
python3-dateparser), each phrase in its own language, said when the corpus says (Thursday
26 November 2026, 10:00, Europe/Berlin), preferring the future.

Usage: dateparser_oracle.py CORPUS. Prints one line per phrase that rings once:
LANGUAGE<TAB>PHRASE<TAB>dateparser's reading ("YYYY-MM-DD HH:MM", local; "-" when it reads none).
"""
import datetime
import sys
import zoneinfo

import dateparser

SAID = datetime.datetime(2026, 11, 26, 10, 0)
SETTINGS = {"RELATIVE_BASE": SAID, "PREFER_DATES_FROM": "future", "TIMEZONE": "Europe/Berlin", "RETURN_AS_TIMEZONE_AWARE": True}
ZONE = zoneinfo.ZoneInfo("Europe/Berlin")


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as corpus:
        for line in corpus:
            if line.startswith("#") or not line.strip():
                continue
            language, phrase, times, _ = line.rstrip("\n").split("\t")
            if "," in times:
                continue  # a repetition: not dateparser's to read
            answer = dateparser.parse(phrase, languages=[language], settings=SETTINGS)
            shown = answer.astimezone(ZONE).strftime("%Y-%m-%d %H:%M") if answer else "-"
            print(f"{language}\t{phrase}\t{shown}")


if __name__ == "__main__":
    main()
