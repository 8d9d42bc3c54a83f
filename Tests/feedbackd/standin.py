#!/usr/bin/python3
"""A stand-in for feedbackd (org.sigxcpu.Feedback) on the tests' private bus, beside Debian's real
one: the real feedbackd here has no vibration motor, so it ends every feedback at once; this one
holds a feedback until EndFeedback, as a phone's does, or (--hang) never answers at all.

    standin.py [--hang]     prints "ready" once it owns the name; logs each call on stdout
"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

HANG = "--hang" in sys.argv
IFACE = "org.sigxcpu.Feedback"


class Feedback(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/sigxcpu/Feedback")
        self.next = 1

    @dbus.service.method(IFACE, in_signature="ssa{sv}i", out_signature="u", async_callbacks=("ok", "fail"))
    def TriggerFeedback(self, app_id, event, hints, timeout, ok, fail):
        profile = str(hints.get("profile", ""))
        print(f"TriggerFeedback {app_id} {event} {profile} {timeout}", flush=True)
        if HANG:
            return  # never answered
        number = self.next
        self.next += 1
        ok(dbus.UInt32(number))
        if timeout == -1:
            GLib.timeout_add(100, lambda: (self.FeedbackEnded(dbus.UInt32(number), dbus.UInt32(0)), False)[1])

    @dbus.service.method(IFACE, in_signature="u", out_signature="")
    def EndFeedback(self, number):
        print(f"EndFeedback {number}", flush=True)
        self.FeedbackEnded(number, dbus.UInt32(0))

    @dbus.service.signal(IFACE, signature="uu")
    def FeedbackEnded(self, number, reason):
        pass

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return dbus.String("full")


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    Feedback(bus)
    bus.request_name(IFACE)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
