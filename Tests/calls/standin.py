#!/usr/bin/python3
"""A stand-in for GNOME Calls (org.gnome.Calls) on the tests' private bus: its calls as objects
under /org/gnome/Calls (an ObjectManager), each with org.gnome.Calls.Call's State, changed when the
test says so through org.chime.TestCalls (Place, SetState, Remove), with the signals GNOME Calls
sends: InterfacesAdded, PropertiesChanged, InterfacesRemoved. (GNOME Calls itself needs a modem
or a SIP account, and a display, to show a call.)

    standin.py      prints "ready" once it owns the name
"""
import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

CALL = "org.gnome.Calls.Call"
MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"


class Call(dbus.service.Object):
    def __init__(self, bus, path, state):
        super().__init__(bus, path)
        self.state = dbus.UInt32(state)

    def properties(self):
        return {"State": self.state, "Inbound": dbus.Boolean(True), "Id": "+49301234567", "Party": "Someone"}

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Calls(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/gnome/Calls")
        self.bus = bus
        self.calls = {}

    @dbus.service.method(MANAGER, in_signature="", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(p): {CALL: c.properties()} for p, c in self.calls.items()}

    @dbus.service.signal(MANAGER, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(MANAGER, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass

    @dbus.service.method("org.chime.TestCalls", in_signature="su", out_signature="")
    def Place(self, path, state):
        call = Call(self.bus, path, state)
        self.calls[path] = call
        self.InterfacesAdded(dbus.ObjectPath(path), {CALL: call.properties()})

    @dbus.service.method("org.chime.TestCalls", in_signature="su", out_signature="")
    def SetState(self, path, state):
        call = self.calls[path]
        call.state = dbus.UInt32(state)
        call.PropertiesChanged(CALL, {"State": call.state}, [])

    @dbus.service.method("org.chime.TestCalls", in_signature="s", out_signature="")
    def Remove(self, path):
        call = self.calls.pop(path)
        call.remove_from_connection()
        self.InterfacesRemoved(dbus.ObjectPath(path), [CALL])


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
calls = Calls(bus)
name = dbus.service.BusName("org.gnome.Calls", bus)
print("ready", flush=True)
GLib.MainLoop().run()
