// chime-eds: the child that speaks to Evolution Data Server (GNOME's calendars) for chime's daemon,
// which never links GLib (DESIGN.md, "Other engines are children"). It keeps a folder in step with
// one EDS calendar, both ways, as vdirsyncer keeps a vdir in step with a CalDAV server: one .ics file
// per event (its series and moved instances, with the time zones they name), written whole or not at
// all; an event EDS adds, changes or removes is written within moments (EDS's live view); a file
// chime writes or removes there is put into EDS (which syncs it to the account's server). The daemon
// then follows the folder as it follows any vdir: the same reader, answers and bounds.
//
//     chime-eds sources              the calendars EDS knows, one JSON object a line
//     chime-eds mirror NAME FOLDER   keep FOLDER in step with the calendar NAME (display name or UID)
//
// What it says on standard output, one line each: `ready N` (the folder holds the calendar's N
// events), `wrote UID`, `removed UID`, `put UID` (a file of chime's went into EDS), `error …`.
// Exit statuses: 0 stopped (SIGTERM, SIGINT), 2 usage, 3 no such calendar, 4 EDS cannot be
// reached, 5 the calendar cannot be opened, 6 the folder cannot be written, 7 EDS went away while
// it ran (the folder stays as it was).
//
// No Foundation: libecal's headers bring the system's ICU through libxml2, which Foundation's own
// ICU cannot sit beside; GLib has what the child needs (atomic writes, folders, checksums).
import CEcal
import Glibc

/// One line on standard output, written at once (the daemon reads it as it comes).
func say(_ line: String) {
    write(descriptor: 1, line + "\n")
}

func write(descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

func fail(_ status: Int32, _ message: String) -> Never {
    write(descriptor: 2, "chime-eds: \(message)\n")
    say("error \(message)")
    exit(status)
}

/// A JSON string.
func json(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// The text a GLib call returned (freed here), nil stays nil.
func take(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}

func message(_ error: UnsafeMutablePointer<GError>?) -> String {
    guard let error else { return "unknown error" }
    defer { g_error_free(error) }
    return String(cString: error.pointee.message)
}

func registry() -> OpaquePointer {
    var error: UnsafeMutablePointer<GError>?
    guard let registry = e_source_registry_new_sync(nil, &error) else {
        fail(4, "Evolution Data Server cannot be reached: \(message(error))")
    }
    guard chime_eds_has_sources(registry) != 0 else {
        fail(4, "Evolution Data Server cannot be reached: its source registry does not answer on the session bus "
            + "(is evolution-data-server installed?)")
    }
    return OpaquePointer(registry)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "sources":
    let registry = registry()
    let lines = take(chime_eds_sources(UnsafeMutablePointer(registry))) ?? ""
    for line in lines.split(separator: "\n") {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 6 else { continue }
        say("{\"account\":\(json(fields[5])),\"backend\":\(json(fields[4])),\"enabled\":\(fields[2] == "1"),\"name\":\(json(fields[1])),"
            + "\"uid\":\(json(fields[0])),\"writable\":\(fields[3] == "1")}")
    }
case "mirror" where arguments.count == 3:
    let name = arguments[arguments.startIndex + 1]
    let folder = arguments[arguments.startIndex + 2]
    Mirror(name: name, folder: folder).run()
default:
    write(descriptor: 2, "usage: chime-eds sources | chime-eds mirror NAME FOLDER\n")
    exit(2)
}
