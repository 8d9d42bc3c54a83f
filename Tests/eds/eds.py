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
"""
import sys

import gi

gi.require_version("EDataServer", "1.2")
gi.require_version("ECal", "2.0")
gi.require_version("ICalGLib", "3.0")
from gi.repository import ECal, EDataServer, ICalGLib  # noqa: E402


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
    if command == "dropcal":
        EDataServer.SourceRegistry.new_sync(None).ref_source(calendar).remove_sync(None)
        return
    client = client_for(calendar)
    if command == "create":
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
