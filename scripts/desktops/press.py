#!/usr/bin/python3
"""Clicks the button labelled LABEL in a notification popup, as a user would: finds it through the
accessibility tree (AT-SPI) and sends a real pointer click (XTest) at its centre on screen.

    press.py LABEL        exit 0 when clicked, 1 when no such button appeared within 20 s
    press.py --action LABEL   does the button's own action (AT-SPI), where no screen position is
                          known (a Wayland shell's surfaces)
    press.py --key NAME   types one key (an X keysym name, e.g. Escape) through XTest
"""

import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402


def find(accessible, label, depth=0):
    if depth > 40:
        return None
    try:
        if accessible.get_role_name() in ("push button", "button") and accessible.get_name() == label:
            return accessible
        count = accessible.get_child_count()
    except gi.repository.GLib.Error:
        return None
    for i in range(count):
        child = accessible.get_child_at_index(i)
        if child is not None:
            found = find(child, label, depth + 1)
            if found is not None:
                return found
    return None


def main():
    if sys.argv[1] == "--key":
        keysym = {"Escape": 0xFF1B}[sys.argv[2]]
        Atspi.generate_keyboard_event(keysym, None, Atspi.KeySynthType.SYM)
        return 0
    by_action = sys.argv[1] == "--action"
    label = sys.argv[2] if by_action else sys.argv[1]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        desktop = Atspi.get_desktop(0)
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            button = find(app, label) if app is not None else None
            if button is not None and by_action:
                button.get_action_iface().do_action(0)
                return 0
            if button is not None:
                # Popups slide in: click once the button has stopped moving.
                box = button.get_extents(Atspi.CoordType.SCREEN)
                time.sleep(0.4)
                again = button.get_extents(Atspi.CoordType.SCREEN)
                if (box.x, box.y, box.width, box.height) != (again.x, again.y, again.width, again.height):
                    continue
                if box.width > 0 and box.height > 0:
                    Atspi.generate_mouse_event(box.x + box.width // 2, box.y + box.height // 2, "b1c")
                    return 0
        time.sleep(0.2)
    return 1


if __name__ == "__main__":
    sys.exit(main())
