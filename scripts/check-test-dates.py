#!/usr/bin/python3
"""Finds a literal date in a test that talks to the real daemon (make check and make test run it).

A date such a test hands the real daemon, the real clock or a file the daemon reads against now is
made from now (TestSupport's TestDates, or the harness's own arithmetic on now), never written: a
test that writes 2026-12-01 for "a day ahead" fails once that day has passed (docs/testing.md, "How a
test gets its dates").

A test talks to the real daemon when its file starts one or drives one (the markers below). In such
a file every date-shaped literal (2027-01-05, 20270105T093000Z, datetime(2027, 1, 5), a Unix time
of this century written as a number) is refused, unless the test it is in (the function around it)
says what pins it:
  - a reference instant: `--after` (chime next reads the rule after that instant), a fixed clock
    (`.fixed(`, `DaemonOnASetClock`, `faketime`), or a comment naming one (`fixed clock`, `fixed
    reference`);
  - or a year that no day of chime's range reaches: before 2026 (always past) or 2199 and later
    (chime's last instant is 2199-12-31 23:59:59, a bound the tests check).
Tests of pure functions (no daemon in their file) keep their literal dates with a literal reference.

    scripts/check-test-dates.py [FILE...]     (default: Tests/, Examples/, Sources/TestSupport)
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# What makes a file a test of the real daemon.
TALKS_TO_DAEMON = re.compile(
    r"DaemonProcess|OnAPrivateBus|EDSSession|DaemonOnASetClock|SchedulerDaemon\(|chime-commands.*daemon|"
    r"start_daemon|\bdaemon\(|\"daemon\"|'daemon'|UNUserNotificationCenter|UserNotificationCenter\("
)

YEAR = r"(20[0-9]{2}|21[0-9]{2})"
DATE_SHAPES = [
    # 2027-01-05, 2027-01-05T09:30
    re.compile(r"(?<![0-9])" + YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(?![0-9])"),
    # 20270105 and 20270105T093000Z (iCalendar)
    re.compile(r"(?<![0-9_])" + YEAR + r"(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])(?=T[0-9]{4}|[^0-9_]|$)"),
    # Python's datetime(2027, 1, 5) and date(2027, 1, 5)
    re.compile(r"\b(?:datetime|date)\(\s*" + YEAR + r"\s*,"),
    # Swift's CivilTime(year: 2027, …) and Foundation's DateComponents(year: 2027, …)
    re.compile(r"\byear:\s*" + YEAR + r"\b"),
]
# A Unix time in seconds between 2026 and 2199, written as a number (1_796_428_800 or 1796428800).
UNIX_TIME = re.compile(r"(?<![0-9_.])([1-7](?:_?[0-9]){9})(?![0-9_])")
FIRST, LAST = 1_767_225_600, 7_226_582_400  # 2026-01-01 and 2199-01-01, UTC
# Where a test (or a helper) begins: its literals are pinned when anything in it pins them.
BEGINS = re.compile(r"^(\s*)(?:@Test\b|@Suite\b|(?:(?:public|private|fileprivate|static|override|mutating)\s+)*func\s|def\s|class\s|struct\s)")
PINNED = re.compile(r"--after|\.fixed\(|DaemonOnASetClock|faketime|fixed clock|fixed reference", re.IGNORECASE)


def living_year(year):
    return 2026 <= year < 2199


def findings(path):
    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as error:
        return [f"{path}: cannot be read ({error})"]
    if not TALKS_TO_DAEMON.search(text):
        return []
    lines = text.splitlines()
    # The chunks: a test or helper runs from its first line to the next one that begins at its
    # indentation or less (a function nested in a test stays the test's).
    pinned = [False] * len(lines)
    start, indent = 0, -1
    chunks = []
    for number, line in enumerate(lines):
        begins = BEGINS.match(line)
        if begins and (indent < 0 or len(begins.group(1)) <= indent):
            chunks.append((start, number))
            start, indent = number, len(begins.group(1))
    chunks.append((start, len(lines)))
    for first, end in chunks:
        if any(PINNED.search(line) for line in lines[first:end]):
            for number in range(first, end):
                pinned[number] = True
    found = []
    for number, line in enumerate(lines, 1):
        if pinned[number - 1]:
            continue
        for shape in DATE_SHAPES:
            for match in shape.finditer(line):
                if living_year(int(match.group(1))):
                    found.append(f"{os.path.relpath(path, ROOT)}:{number}: a literal date ({match.group(0)}) in a test of the real daemon")
        for match in UNIX_TIME.finditer(line):
            value = int(match.group(1).replace("_", ""))
            if FIRST <= value < LAST:
                found.append(f"{os.path.relpath(path, ROOT)}:{number}: a literal Unix time ({match.group(1)}) in a test of the real daemon")
    return found


def files(roots):
    for root in roots:
        if os.path.isfile(root):
            yield root
            continue
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = [s for s in subfolders if not s.startswith(".")]
            for name in sorted(names):
                if name.endswith((".swift", ".py")):
                    yield os.path.join(folder, name)


def main(arguments):
    roots = arguments or [os.path.join(ROOT, p) for p in ("Tests", "Examples", "Sources/TestSupport")]
    found = [f for path in files(roots) for f in findings(path)]
    for line in found:
        print(line, file=sys.stderr)
    if found:
        print(f"check-test-dates: {len(found)} literal date(s) in tests of the real daemon: make each from now "
              "(TestSupport's TestDates), or say on its line what pins it (docs/testing.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
