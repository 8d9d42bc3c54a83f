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
//     chime-eds reminders NAME on|off|show
//                                    GNOME's own reminders (evolution-alarm-notify) for the calendar
//                                    ('*': every enabled one): Evolution's "include in reminders"
//                                    switch, set or shown; a line each: UID, tab, name, tab, on/off
//     chime-eds mirror '*' FOLDER    every enabled calendar, each in FOLDER/UID, and FOLDER/calendars
//                                    (a line each: folder, UID, rw or ro (whether EDS lets it be
//                                    written), name, tab-separated); calendars added, switched off or
//                                    removed in GNOME Settings or Calendar are followed (a removed
//                                    one's folder goes; one that cannot be opened yet, as EDS
//                                    announces a calendar before it can open it, is tried again
//                                    after 1, 2, 4 … up to 60 s)
//
// What it says on standard output, one line each: `ready N` (the folder holds the calendar's N
// events), before it `unchanged N` (at a start where EDS's revision of the calendar was the one
// the folder last held whole: N events were only listed, not fetched again), `events N` (it holds N now), `wrote UID`, `removed UID`, `put UID` (a file of chime's went into EDS), `dismissed UID
// N` (an answer put into EDS took N reminders off GNOME's reminder list), `reminders on|off`
// (whether GNOME's own reminders ring the calendar too; said at the start and when it changes),
// `error …`;
// with '*', each calendar's lines begin with its UID and a space.
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
if arguments.first == "mirror" { chime_eds_end_with_parent() }
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
case "mirror" where arguments.count == 3 && arguments[arguments.startIndex + 1] == "*":
    let all = AllCalendars(registry: registry(), folder: arguments[arguments.startIndex + 2])
    all.update()
    runLoop()
case "mirror" where arguments.count == 3:
    let name = arguments[arguments.startIndex + 1]
    let folder = arguments[arguments.startIndex + 2]
    let registry = registry()
    guard let source = chime_eds_find_source(UnsafeMutablePointer(registry), name) else {
        var known: [String] = []
        for line in (take(chime_eds_enabled_calendars(UnsafeMutablePointer(registry))) ?? "").split(separator: "\n") {
            if let tab = line.firstIndex(of: "\t") { known.append("\"" + line[line.index(after: tab)...] + "\"") }
        }
        fail(3, "Evolution Data Server has no calendar \"\(name)\" (its calendars: \(known.joined(separator: ", ")))")
    }
    let mirror = Mirror(name: name, folder: folder)
    mirror.onFailure = { fail(5, $0) }
    if let (status, message) = mirror.start(source) { fail(status, message) }
    g_object_unref(source)
    runLoop()
case "reminders" where arguments.count == 3 && ["on", "off", "show"].contains(arguments[arguments.startIndex + 2]):
    let name = arguments[arguments.startIndex + 1]
    let wanted = arguments[arguments.startIndex + 2]
    let registry = registry()
    var calendars: [(uid: String, name: String)] = []
    for line in (take(chime_eds_enabled_calendars(UnsafeMutablePointer(registry))) ?? "").split(separator: "\n") {
        guard let tab = line.firstIndex(of: "\t") else { continue }
        let calendar = (uid: String(line[..<tab]), name: String(line[line.index(after: tab)...]))
        if name == "*" || name == calendar.uid || name == calendar.name { calendars.append(calendar) }
    }
    if calendars.isEmpty, name != "*" { fail(3, "Evolution Data Server has no calendar \"\(name)\"") }
    var failed = false
    for calendar in calendars {
        guard let source = chime_eds_find_source(UnsafeMutablePointer(registry), calendar.uid) else { continue }
        defer { g_object_unref(source) }
        if wanted != "show" {
            var error: UnsafeMutablePointer<GError>?
            if chime_eds_set_reminders_included(source, wanted == "on" ? 1 : 0, &error) == 0 {
                write(descriptor: 2, "chime-eds: the calendar \"\(calendar.name)\" cannot be changed: \(message(error))\n")
                failed = true
                continue
            }
        }
        say(calendar.uid + "\t" + calendar.name + "\t" + (chime_eds_reminders_included(source) != 0 ? "on" : "off"))
    }
    exit(failed ? 5 : 0)
default:
    write(descriptor: 2, "usage: chime-eds sources | chime-eds mirror NAME FOLDER | chime-eds reminders NAME on|off|show\n")
    exit(2)
}

/// GLib's loop until SIGTERM or SIGINT; then the process ends (status 0).
func runLoop() -> Never {
    let loop = g_main_loop_new(nil, 0)
    for signal in [SIGTERM, SIGINT] {
        g_unix_signal_add(signal, { data in
            g_main_loop_quit(OpaquePointer(data))
            return 0
        }, UnsafeMutableRawPointer(loop))
    }
    g_main_loop_run(loop)
    for mirror in runningMirrors.values { mirror.save() }
    exit(0)
}

/// Every enabled calendar of EDS, each mirrored in a folder of its own, followed as they come and go.
final class AllCalendars {
    let registry: OpaquePointer
    let folder: String
    private var mirrors: [String: Mirror] = [:]
    private var scheduled = false
    /// Calendars that could not be opened, by UID: how many times in a row. EDS announces a new
    /// calendar before its calendar factory can open it (on a busy machine, for seconds): each is
    /// tried again after a pause that doubles, from a second up to a minute.
    private var failures: [String: Int] = [:]
    private var retryPending = false

    init(registry: OpaquePointer, folder: String) {
        self.registry = registry
        self.folder = folder
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { fail(6, "\(folder) cannot be made: \(String(cString: strerror(errno)))") }
        chime_eds_on_sources_changed(UnsafeMutablePointer(registry), { data in
            guard let data else { return }
            Unmanaged<AllCalendars>.fromOpaque(data).takeUnretainedValue().schedule()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func schedule() {
        guard !scheduled else { return }
        scheduled = true
        g_idle_add({ data in
            guard let data else { return 0 }
            let all = Unmanaged<AllCalendars>.fromOpaque(data).takeUnretainedValue()
            all.scheduled = false
            all.update()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Looks again (through `schedule`, with any change of sources meanwhile), after the shortest
    /// pause a calendar that could not be opened is due, unless a look is on its way already.
    private func retryLater() {
        guard !retryPending, let most = failures.values.min() else { return }
        retryPending = true
        g_timeout_add_seconds(guint(min(60, 1 << min(most - 1, 6))), { data in
            guard let data else { return 0 }
            Unmanaged<AllCalendars>.fromOpaque(data).takeUnretainedValue().retryDue()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func retryDue() {
        retryPending = false
        schedule()
    }

    /// Starts a mirror for each enabled calendar that has none, stops (and removes the folder of)
    /// each whose calendar is gone or switched off, and writes the index of calendars.
    func update() {
        var calendars: [(uid: String, name: String)] = []
        for line in (take(chime_eds_enabled_calendars(UnsafeMutablePointer(registry))) ?? "").split(separator: "\n") {
            guard let tab = line.firstIndex(of: "\t") else { continue }
            calendars.append((String(line[..<tab]), String(line[line.index(after: tab)...])))
        }
        let wanted = Set(calendars.map(\.uid))
        let wantedFolders = Set(calendars.map { Mirror.folderName($0.uid) })
        for uid in failures.keys where !wanted.contains(uid) { failures[uid] = nil }
        for (uid, mirror) in mirrors where !wanted.contains(uid) {
            mirror.stop(removingFolder: true)
            mirrors[uid] = nil
            say("\(uid) gone")
        }
        // Folders of calendars removed while the child did not run.
        if let directory = opendir(folder) {
            var stale: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if !name.hasPrefix("."), name != "calendars", !wantedFolders.contains(name) { stale.append(name) }
            }
            closedir(directory)
            for name in stale { Mirror(name: name, folder: folder + "/" + name).stop(removingFolder: true) }
        }
        for calendar in calendars where mirrors[calendar.uid] == nil {
            guard let source = chime_eds_find_source(UnsafeMutablePointer(registry), calendar.uid) else { continue }
            let mirror = Mirror(name: calendar.name, folder: folder + "/" + Mirror.folderName(calendar.uid))
            mirror.prefix = calendar.uid + " "
            mirror.onFailure = { [weak self, weak mirror] problem in
                say("\(calendar.uid) error \(problem)")
                mirror?.stop(removingFolder: false)
                self?.mirrors[calendar.uid] = nil
            }
            if let (_, message) = mirror.start(source) {
                say("\(calendar.uid) error \(message)")
                mirror.stop(removingFolder: false)
                failures[calendar.uid, default: 0] += 1
            } else {
                mirrors[calendar.uid] = mirror
                failures[calendar.uid] = nil
            }
            g_object_unref(source)
        }
        retryLater()
        // (Whether chime may write to it: EDS's own answer, once the calendar is open.)
        let index = calendars.map {
            Mirror.folderName($0.uid) + "\t" + $0.uid + "\t" + (mirrors[$0.uid]?.isReadOnly == false ? "rw" : "ro") + "\t" + $0.name + "\n"
        }.joined()
        if let problem = Mirror.write(index, to: folder + "/calendars") { say("error \(folder)/calendars: \(problem)") }
    }
}
