#!/usr/bin/python3
"""Evolution Data Server as GNOME Calendar drives it, for chime's tests: python's gi with
EDataServer, ECal and ICalGLib on the session bus of the environment (a private one the test
started, with EDS's services activated there in a scratch home).

    eds.py create CALENDAR ICS     add the VEVENT (a file's text) to the calendar (display name or UID)
    eds.py modify CALENDAR ICS     change it (the whole series)
    eds.py remove CALENDAR UID
    eds.py list CALENDAR           one line per event: UID, then its iCalendar on one line (folds joined)
    eds.py bulk CALENDAR N         add N weekly events with a reminder each (bulk-0 ... bulk-N-1), in one call
    eds.py newcal NAME             make a local calendar, as GNOME Calendar's "Add Calendar" does; prints its UID
    eds.py dropcal UID             remove a calendar, as GNOME Calendar does
    eds.py newcaldav NAME URL      add a calendar of a CalDAV server (EDS's own CalDAV backend, no
                                   password: the test's server lets anyone in), as GNOME Calendar's
                                   "Add Calendar" from a URL does; prints its UID
    eds.py refresh CALENDAR        have EDS fetch the server's changes now
    eds.py remind CALENDAR UID TRIGGER
                                   put the event's reminder that triggered at TRIGGER (seconds since
                                   the epoch) on EReminderWatcher's past list, as GNOME's reminder
                                   window keeps it (GSettings org.gnome.evolution-data-server.calendar)
    eds.py past CALENDAR           the past list's entries of the calendar: event UID, tab, trigger
    eds.py included CALENDAR       "on" or "off": whether GNOME's reminders include the calendar
"""
import sys
import time

import gi

gi.require_version("EDataServer", "1.2")
gi.require_version("ECal", "2.0")
gi.require_version("ICalGLib", "3.0")
from gi.repository import ECal, EDataServer, Gio, GLib, ICalGLib  # noqa: E402

SETTINGS = "org.gnome.evolution-data-server.calendar"


def source_for(name):
    registry = EDataServer.SourceRegistry.new_sync(None)
    for source in registry.list_sources(EDataServer.SOURCE_EXTENSION_CALENDAR):
        if name in (source.get_uid(), source.get_display_name()):
            return source
    sys.exit(f"eds.py: no calendar {name!r}")


def client_for(name):
    registry = EDataServer.SourceRegistry.new_sync(None)
    for source in registry.list_sources(EDataServer.SOURCE_EXTENSION_CALENDAR):
        if name in (source.get_uid(), source.get_display_name()):
            # The local calendar never reports itself connected: wait the longest, as GNOME does.
            return ECal.Client.connect_sync(source, ECal.ClientSourceType.EVENTS, 0xFFFFFFFF, None)
    sys.exit(f"eds.py: no calendar {name!r}")


def event(text):
    component = ICalGLib.Component.new_from_string(text)
    if component.isa() == ICalGLib.ComponentKind.VCALENDAR_COMPONENT:
        component = component.get_first_component(ICalGLib.ComponentKind.VEVENT_COMPONENT)
    return component


def main():
    command, calendar = sys.argv[1], sys.argv[2]
    if command == "newcal":
        registry = EDataServer.SourceRegistry.new_sync(None)
        source = EDataServer.Source.new(None, None)
        source.set_display_name(calendar)
        source.set_parent("local-stub")
        source.get_extension(EDataServer.SOURCE_EXTENSION_CALENDAR).set_backend_name("local")
        registry.commit_source_sync(source, None)
        print(source.get_uid())
        return
    if command == "newcaldav":
        registry = EDataServer.SourceRegistry.new_sync(None)
        source = EDataServer.Source.new(None, None)
        source.set_display_name(calendar)
        source.set_parent("caldav-stub")
        source.get_extension(EDataServer.SOURCE_EXTENSION_CALENDAR).set_backend_name("caldav")
        uri = GLib.Uri.parse(sys.argv[3], GLib.UriFlags.NONE)
        authentication = source.get_extension(EDataServer.SOURCE_EXTENSION_AUTHENTICATION)
        authentication.set_host(uri.get_host())
        authentication.set_port(uri.get_port())
        authentication.set_method("none")
        source.get_extension(EDataServer.SOURCE_EXTENSION_WEBDAV_BACKEND).set_uri(uri)
        source.get_extension(EDataServer.SOURCE_EXTENSION_OFFLINE).set_stay_synchronized(True)
        registry.commit_source_sync(source, None)
        print(source.get_uid())
        return
    if command == "dropcal":
        EDataServer.SourceRegistry.new_sync(None).ref_source(calendar).remove_sync(None)
        return
    if command == "past":
        uid = source_for(calendar).get_uid()
        for entry in Gio.Settings.new(SETTINGS).get_strv("reminders-past"):
            fields = entry.split("\n", 5)
            if len(fields) == 6 and fields[0] == uid:
                component = ICalGLib.Component.new_from_string(fields[5])
                print(f"{component.get_uid()}\t{fields[2]}")
        return
    if command == "included":
        source = source_for(calendar)
        print("on" if source.get_extension(EDataServer.SOURCE_EXTENSION_ALARMS).get_include_me() else "off")
        return
    client = client_for(calendar)
    if command == "remind":
        uid, trigger = sys.argv[3], int(sys.argv[4])
        ok, component = client.get_object_sync(uid, None, None)
        # As EReminderWatcher writes an entry: source UID, alarm UID, trigger, occurrence start and end, the event.
        entry = "\n".join([client.get_source().get_uid(), "", str(trigger), str(trigger), str(trigger + 1800),
                           component.as_ical_string()])
        settings = Gio.Settings.new(SETTINGS)
        past = [e for e in settings.get_strv("reminders-past") if e]
        settings.set_strv("reminders-past", past + [entry])
        Gio.Settings.sync()
    elif command == "refresh":
        client.refresh_sync(None)
    elif command == "revision":
        # The client learns the backend's properties as its main context runs: asked too soon, it
        # has none yet. Asked again for up to 10 s while the context runs.
        deadline = time.monotonic() + 10
        while True:
            ok, revision = client.get_backend_property_sync("revision", None)
            if revision or time.monotonic() > deadline:
                break
            GLib.MainContext.default().iteration(False)
            time.sleep(0.05)
        print(revision or "")
    elif command == "create":
        client.create_object_sync(event(open(sys.argv[3]).read()), ECal.OperationFlags.NONE, None)
    elif command == "modify":
        client.modify_object_sync(event(open(sys.argv[3]).read()), ECal.ObjModType.ALL, ECal.OperationFlags.NONE, None)
    elif command == "remove":
        client.remove_object_sync(sys.argv[3], None, ECal.ObjModType.ALL, ECal.OperationFlags.NONE, None)
    elif command == "bulk":
        events = []
        for i in range(int(sys.argv[3])):
            events.append(event(f"""BEGIN:VEVENT
UID:bulk-{i}
SUMMARY:Event {i}
DTSTART;TZID=Europe/Berlin:2027{1 + i % 12:02d}{1 + i % 28:02d}T{8 + i % 10:02d}0000
DURATION:PT30M
RRULE:FREQ=WEEKLY
BEGIN:VALARM
ACTION:DISPLAY
DESCRIPTION:Event {i}
TRIGGER:-PT10M
END:VALARM
END:VEVENT"""))
        client.create_objects_sync(events, ECal.OperationFlags.NONE, None)
    elif command == "list":
        ok, components = client.get_object_list_as_comps_sync("#t", None)
        for component in components:
            text = component.get_as_string().replace("\r\n ", "").replace("\r\n", "\\n")
            print(component.get_uid(), text)
    else:
        sys.exit(f"eds.py: no command {command!r}")


if __name__ == "__main__":
    main()
