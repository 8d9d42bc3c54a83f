// Keeps a folder in step with one EDS calendar, both ways (see main.swift).
import CEcal
import Glibc

/// The mirrors running, whose state is written before the child ends (SIGTERM, SIGINT).
nonisolated(unsafe) var runningMirrors: [ObjectIdentifier: Mirror] = [:]

final class Mirror {
    /// Bounds, as for any followed calendar: a calendar of more events is mirrored up to this many
    /// (said), and an event whose text is longer is left out (said).
    static let maximumEvents = 200_000
    static let maximumEventBytes = 1 << 20

    let name: String
    let folder: String
    private var client: UnsafeMutablePointer<ECalClient>?
    /// The calendar's source (held while it runs): GNOME's reminder switch and state for it.
    private var source: UnsafeMutablePointer<ESource>?
    /// Whether GNOME's own reminders include the calendar, as last said.
    private var remindersSaid: Bool?
    private var view: UnsafeMutablePointer<ECalClientView>?
    /// Each file as it was when the folder and EDS last agreed: its event's UID and its text's hash.
    private var state: [String: Entry] = [:]
    /// The file each event is in: its UID's own name (`fileName`), or the name chime gave a file it
    /// wrote (chime escapes a UID its own way): an event EDS changes is written back where it is.
    private var fileOf: [String: String] = [:]
    private var changedUIDs = Set<String>()
    private var changedFiles = Set<String>()
    /// Files the mirror itself removed whose removal the folder's watch has not reported yet.
    private var ownRemovals: [String: Int] = [:]
    /// Files another program (chime) removed or moved away, as the folder's watch reported: where
    /// such a file is back as the mirror last wrote it, the mirror's write of EDS's copy landed
    /// after that removal (it checked, then chime removed, then it wrote), and the removal wins.
    private var removedByOthers = Set<String>()
    private var scheduled = false
    private var inotify: Int32 = -1
    private var watch: guint = 0

    struct Entry {
        var uid: String
        var hash: String
        /// The file as the mirror left it (inode, size, change time), when it wrote it this run: a
        /// file the folder's watch reports that still is just that is its own write, not chime's,
        /// and is not read again.
        var stamp: Stamp? = nil
    }

    struct Stamp: Equatable {
        var inode: UInt
        var size: Int
        var seconds: Int
        var nanoseconds: Int

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            (inode, size, seconds, nanoseconds) = (UInt(info.st_ino), Int(info.st_size), info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
        }
    }

    init(name: String, folder: String) {
        self.name = name
        self.folder = folder
    }

    private func path(_ file: String) -> String { folder + "/" + file }

    private func file(of uid: String) -> String { fileOf[uid] ?? Self.fileName(uid) }

    /// What the folder and EDS agree `file` holds (nil: nothing).
    private func setState(_ file: String, _ entry: Entry?) {
        if let old = state[file], fileOf[old.uid] == file { fileOf[old.uid] = nil }
        state[file] = entry
        if let entry { fileOf[entry.uid] = file }
    }
    private var statePath: String { path(".chime-eds-state") }
    /// EDS's revision of the calendar when the folder last held all of it (after a first
    /// population): the same at the next start, and nothing changed meanwhile.
    private var revisionPath: String { path(".chime-eds-revision") }
    /// The revision read as this run started (written once its first population is over).
    private var startRevision: String?
    /// A change made in the folder could not be put into EDS (the folder is not as EDS has it).
    private var putFailed = false
    /// Events the first population fetched (the rest were unchanged since the revision trusted).
    private var fetched = 0
    private var trustedRevision = false

    /// Whether EDS keeps the calendar read-only (a subscription, the contacts' birthdays), or it is not open.
    var isReadOnly: Bool { client.map { chime_eds_is_readonly($0) != 0 } ?? true }

    /// What it says is prefixed with this (the calendar's UID where one child mirrors them all).
    var prefix = ""

    /// Opens the calendar `source`, takes in what changed on either side while it did not run, and
    /// follows both from now on: nil, or why it cannot (with the exit status a lone mirror ends with).
    /// The calendar's events arrive as EDS's view gives them, in batches (a big calendar is never
    /// held whole); `ready N` is said once the first population is over and the folder holds them.
    func start(_ source: UnsafeMutablePointer<ESource>) -> (status: Int32, message: String)? {
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { return (6, "\(folder) cannot be made: \(String(cString: strerror(errno)))") }
        self.source = UnsafeMutablePointer(OpaquePointer(g_object_ref(source)))
        sayReminders()
        chime_eds_on_source_changed(source, { data in
            guard let data else { return }
            Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().sayReminders()
        }, Unmanaged.passUnretained(self).toOpaque())
        loadState()
        var error: UnsafeMutablePointer<GError>?
        guard let client = chime_eds_connect(source, &error) else {
            return (5, "the calendar \"\(name)\" cannot be opened: \(message(error))")
        }
        self.client = client
        putChimesChanges()
        save()
        guard watchFolder() else { return (6, "\(folder) cannot be watched") }
        // Unchanged in EDS since the folder last held the whole calendar (a restart): the events
        // the folder holds are only listed, not fetched again (0.7 ms each: 70 s for 100,000).
        startRevision = take(chime_eds_revision(client))
        let saved = Self.read(revisionPath, limit: 4096).map { String(decoding: $0, as: UTF8.self) }
        let trusted = startRevision != nil && saved == startRevision && !state.isEmpty && !putFailed ? startRevision : nil
        trustedRevision = trusted != nil
        unlink(revisionPath)  // (written again once this run's first population is over)
        let this = Unmanaged.passUnretained(self).toOpaque()
        guard let view = chime_eds_watch(client, { uid, data in
            guard let uid, let data else { return }
            Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().edsChanged(String(cString: uid))
        }, { uid, text, data in
            guard let uid, let data else { return }
            Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().first(String(cString: uid), text.map { String(cString: $0) })
        }, { problem, data in
            guard let data else { return }
            Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().populated(problem.map { String(cString: $0) })
        }, trusted, { uid, data in
            guard let uid, let data else { return 0 }
            return Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().holds(String(cString: uid)) ? 1 : 0
        }, this, &error) else {
            return (5, "the calendar \"\(name)\" cannot be watched: \(message(error))")
        }
        self.view = view
        runningMirrors[ObjectIdentifier(self)] = self
        // EDS stopped or crashed: said, and the child ends (the folder stays as it was; started
        // again, it takes in what changed meanwhile).
        chime_eds_on_backend_died(client, unsafeBitCast({ (_: UnsafeMutableRawPointer?, _: UnsafeMutableRawPointer?) in
            chime_eds.say("error Evolution Data Server went away")
            exit(7)
        } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void, to: GCallback.self), this)
        return nil
    }

    /// `reminders on` (GNOME's own reminders ring the calendar too: it rings twice) or `reminders
    /// off`, at the start and whenever it changes.
    private func sayReminders() {
        guard let source else { return }
        let included = chime_eds_reminders_included(source) != 0
        guard included != remindersSaid else { return }
        remindersSaid = included
        say("reminders " + (included ? "on" : "off"))
    }

    /// What a calendar whose first population failed does (a lone mirror ends; one of all is dropped).
    var onFailure: ((String) -> Void)?
    /// The files of the events of the first population (nil once it is over).
    private var firstFiles: Set<String>? = []

    /// An event of the first population: its text, or nil where the folder holds it as it is.
    private func first(_ uid: String, _ text: String?) {
        guard firstFiles != nil, firstFiles!.count < Self.maximumEvents else {
            if firstFiles?.count == Self.maximumEvents { say("error the calendar \"\(name)\" has more than \(Self.maximumEvents) events; the first are followed") }
            return
        }
        firstFiles?.insert(file(of: uid))
        if let text {
            fetched += 1
            store(uid, text)
        }
    }

    /// Whether the folder holds the event `uid` as the state says it wrote it.
    private func holds(_ uid: String) -> Bool {
        let file = file(of: uid)
        guard let entry = state[file], entry.uid == uid else { return false }
        return entry.stamp.map { $0 == Stamp(path(file)) } ?? (access(path(file), F_OK) == 0)
    }

    /// The first population is over: files of events EDS no longer has go; `ready N`.
    private func populated(_ problem: String?) {
        guard let files = firstFiles else { return }
        if let problem {
            onFailure?("the calendar \"\(name)\" cannot be read: \(problem)")
            return
        }
        if trustedRevision { say("unchanged \(max(0, files.count - fetched))") }
        let present = files.union(changedUIDs.map(file(of:)))
        firstFiles = nil
        for (file, entry) in state where !present.contains(file) {
            removeOwn(file)
            setState(file, nil)
            say("removed \(entry.uid)")
        }
        save()
        if let startRevision, let problem = Self.write(startRevision, to: revisionPath) { say("error \(revisionPath): \(problem)") }
        // Said once both sides are watched and the folder holds the calendar: from here no change is missed.
        eventsSaid = state.count
        say("ready \(state.count)")
    }

    /// Stops following the calendar; with `removingFolder`, its folder goes too (a calendar removed
    /// from EDS: its alarms go with it).
    func stop(removingFolder: Bool) {
        if !removingFolder, client != nil { save() }
        runningMirrors[ObjectIdentifier(self)] = nil
        if watch != 0 { g_source_remove(watch) }
        watch = 0
        if inotify >= 0 { close(inotify) }
        inotify = -1
        let this = Unmanaged.passUnretained(self).toOpaque()
        if let view {
            g_signal_handlers_disconnect_matched(view, G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, this)
            chime_eds_unwatch(view)
        }
        view = nil
        if let client {
            g_signal_handlers_disconnect_matched(client, G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, this)
            g_object_unref(client)
        }
        client = nil
        if let source {
            g_signal_handlers_disconnect_matched(source, G_SIGNAL_MATCH_DATA, 0, 0, nil, nil, this)
            g_object_unref(source)
        }
        source = nil
        guard removingFolder else { return }
        for file in listFolder() { unlink(path(file)) }
        rmdir(folder)
    }

    private var lastError = ""

    private func say(_ line: String) { chime_eds.say(prefix + line) }

    // MARK: - EDS to the folder

    /// Writes the file of `uid` as EDS holds it now, or removes it where EDS no longer has the event.
    private func mirror(_ uid: String) {
        let file = file(of: uid)
        var error: UnsafeMutablePointer<GError>?
        guard let text = take(chime_eds_calendar_for_uid(client, uid, &error)) else {
            if error != nil {
                say("error \(uid): \(message(error))")
                return
            }
            if state[file] != nil || access(path(file), F_OK) == 0 {
                removeOwn(file)
                setState(file, nil)
                say("removed \(uid)")
            }
            return
        }
        if state[file] != nil, access(path(file), F_OK) != 0 {
            // Taken out of the folder since it was last written or put (chime cancelled it), and the
            // folder's watch has not said so yet: the folder's change wins, and goes into EDS.
            // (Written back here, the cancel would be lost: EDS's echo of chime's own put racing it.)
            changedFiles.insert(file)
            schedule()
            return
        }
        store(uid, text)
    }

    /// Removes the folder's `file`, its removal known as the mirror's own when the watch reports it.
    private func removeOwn(_ file: String) {
        if unlink(path(file)) == 0 { ownRemovals[file, default: 0] += 1 }
    }

    /// Writes `text`, the event `uid` as EDS holds it, unless the file already says it.
    private func store(_ uid: String, _ text: String) {
        let file = file(of: uid)
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumEventBytes else {
            say("error \(uid): \(bytes.count) bytes, more than an event of a followed calendar may have (\(Self.maximumEventBytes)); left out")
            return
        }
        let hash = Self.hash(bytes)
        if state[file]?.hash == hash, access(path(file), F_OK) == 0 { return }
        // Known before the file lands: the folder's watch then sees a file that is as EDS has it.
        setState(file, Entry(uid: uid, hash: hash))
        if let problem = Self.write(text, to: path(file)) {
            setState(file, nil)
            say("error \(uid): \(problem)")
        } else {
            state[file]?.stamp = Stamp(path(file))
            say("wrote \(uid)")
        }
    }

    /// Written whole or not at all (GLib writes a file beside it, then renames it over it): nil, or
    /// what went wrong.
    static func write(_ text: String, to path: String) -> String? {
        var error: UnsafeMutablePointer<GError>?
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { g_file_set_contents(path, $0.baseAddress, gssize($0.count), &error) }
        }
        return written != 0 ? nil : message(error)
    }

    /// A file's bytes (nil: unreadable, gone, or larger than `limit`, which is checked before any
    /// byte is read: a file of any size may land in the folder).
    static func read(_ path: String, limit: Int) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_size <= limit else { return nil }
        var contents: UnsafeMutablePointer<gchar>?
        var length: gsize = 0
        guard g_file_get_contents(path, &contents, &length, nil) != 0, let contents else { return nil }
        defer { g_free(contents) }
        return Array(UnsafeRawBufferPointer(start: contents, count: Int(length)))
    }

    private func edsChanged(_ uid: String) {
        changedUIDs.insert(uid)
        firstFiles?.insert(file(of: uid))
        schedule()
    }

    // MARK: - The folder to EDS

    /// Files chime wrote or removed since the folder and EDS last agreed (while this ran, or
    /// before it started): put into EDS, or their events removed from it.
    private func putChimesChanges(only names: Set<String>? = nil) {
        // Removed by chime, then written back by the mirror (EDS's copy of chime's own put, checked
        // for just before chime removed it): taken out again, and out of EDS below.
        for file in removedByOthers where names?.contains(file) ?? true {
            removedByOthers.remove(file)
            if let stamp = state[file]?.stamp, stamp == Stamp(path(file)) { removeOwn(file) }
        }
        let files = Set(listFolder().filter { $0.hasSuffix(".ics") && !$0.hasPrefix(".") })
        for file in names.map({ $0.intersection(files) }) ?? files {
            if let stamp = state[file]?.stamp, stamp == Stamp(path(file)) { continue }
            guard let bytes = Self.read(path(file), limit: Self.maximumEventBytes) else {
                var info = stat()
                if stat(path(file), &info) == 0, info.st_size > Self.maximumEventBytes {
                    say("error \(file): \(info.st_size) bytes, more than an event of a followed calendar may have (\(Self.maximumEventBytes)); not put into the calendar")
                }
                continue
            }
            let hash = Self.hash(bytes)
            if state[file]?.hash == hash { continue }
            var error: UnsafeMutablePointer<GError>?
            if chime_eds_put(client, String(decoding: bytes, as: UTF8.self), &error) != 0 {
                let uid = Self.uid(in: bytes) ?? state[file]?.uid ?? file
                setState(file, Entry(uid: uid, hash: hash))
                say("put \(uid)")
                // An answer made in chime, in GNOME's reminder state too: its reminder window
                // (and evolution-alarm-notify at its next start) does not show it again.
                if let acknowledged = Self.acknowledged(in: bytes), let source {
                    let dismissed = chime_eds_answered(source, uid, acknowledged)
                    if dismissed > 0 { say("dismissed \(uid) \(dismissed)") }
                }
            } else {
                putFailed = true
                say("error \(file): not put into the calendar: \(message(error))")
            }
        }
        for (file, entry) in state where !files.contains(file) && (names?.contains(file) ?? true) {
            var error: UnsafeMutablePointer<GError>?
            if chime_eds_remove(client, entry.uid, &error) != 0 {
                setState(file, nil)
                say("removed \(entry.uid)")
            } else {
                putFailed = true
                say("error \(entry.uid): not removed from the calendar: \(message(error))")
            }
        }
    }

    private func watchFolder() -> Bool {
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0, inotify_add_watch(inotify, folder, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)) >= 0 else {
            return false
        }
        watch = g_unix_fd_add(inotify, G_IO_IN, { _, _, data in
            guard let data else { return 0 }
            Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue().folderChanged()
            return 1
        }, Unmanaged.passUnretained(self).toOpaque())
        return true
    }

    private func folderChanged() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (length, mask, name): (Int, UInt32, String) = buffer.withUnsafeBytes { raw in
                    let event = raw.load(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let bytes = raw[start..<min(count, start + Int(event.len))].prefix { $0 != 0 }
                    return (Int(event.len), event.mask, String(decoding: bytes, as: UTF8.self))
                }
                if name.hasSuffix(".ics"), !name.hasPrefix(".") {
                    changedFiles.insert(name)
                    if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                        if let own = ownRemovals[name] { ownRemovals[name] = own > 1 ? own - 1 : nil } else { removedByOthers.insert(name) }
                    }
                }
                offset += MemoryLayout<inotify_event>.size + length
            }
        }
        if !changedFiles.isEmpty { schedule() }
    }

    // MARK: - Both

    /// Changes are taken in together, once the loop is idle: a burst of EDS's signals or of the
    /// folder's events is one pass.
    private func schedule() {
        guard !scheduled else { return }
        scheduled = true
        // The idle call holds the mirror: one stopped meanwhile is not gone under it.
        g_idle_add({ data in
            guard let data else { return 0 }
            Unmanaged<Mirror>.fromOpaque(data).takeRetainedValue().settle()
            return 0
        }, Unmanaged.passRetained(self).toOpaque())
    }

    private func settle() {
        scheduled = false
        guard client != nil else { return }
        let files = changedFiles
        changedFiles = []
        if !files.isEmpty { putChimesChanges(only: files) }
        let uids = changedUIDs
        changedUIDs = []
        for uid in uids.sorted() { mirror(uid) }
        saveSoon()
        if firstFiles == nil, state.count != eventsSaid {
            eventsSaid = state.count
            say("events \(state.count)")
        }
    }

    /// How many events the folder held when it last said so (`ready N`, then `events N`).
    private var eventsSaid = -1

    /// The folder's names.
    private func listFolder() -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// The state, a line a file: "FILE<tab>HASH<tab>UID". The UID comes last, so a tab in it is
    /// kept; iCalendar's content lines cannot hold a line break, so no UID has one.
    private var saving: guint = 0

    /// The state is written within two seconds of a change (each writing is the whole of it: once
    /// per change would cost a big calendar's first population the square of its size).
    private func saveSoon() {
        guard saving == 0 else { return }
        saving = g_timeout_add(2000, { data in
            guard let data else { return 0 }
            let mirror = Unmanaged<Mirror>.fromOpaque(data).takeUnretainedValue()
            mirror.saving = 0
            mirror.save()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Writes the state now (at the end of the first population, and when the mirror stops).
    func save() {
        if saving != 0 { g_source_remove(saving) }
        saving = 0
        var text = ""
        for (file, entry) in state.sorted(by: { $0.key < $1.key }) {
            text += file + "\t" + entry.hash + "\t" + entry.uid + "\n"
        }
        if let problem = Self.write(text, to: statePath) { say("error \(statePath): \(problem)") }
    }

    /// Read back as `save` wrote it; a state file larger than the most events it can describe is
    /// not the child's, and is left unread (everything is then taken as new, which only rewrites).
    private func loadState() {
        guard let bytes = Self.read(statePath, limit: Self.maximumEvents * 1024) else { return }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            setState(String(fields[0]), Entry(uid: String(fields[2]), hash: String(fields[1])))
        }
    }

    // MARK: - Names

    /// The file of an event: its UID where that is a plain name, else escaped; a long one shortened
    /// with its hash (the daemon names a file it writes the same way: OwnCalendars.fileName).
    static func fileName(_ uid: String) -> String {
        var name = ""
        for byte in uid.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "."):
                name.append(Character(UnicodeScalar(byte)))
            default:
                name += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        if name.hasPrefix(".") { name = "%2E" + name.dropFirst() }
        if name.utf8.count > 150 { name = String(name.prefix(100)) + "-" + hash(Array(uid.utf8)) }
        return name + ".ics"
    }

    /// The folder of a calendar (its EDS UID, escaped as event files' names are).
    static func folderName(_ uid: String) -> String { String(fileName(uid).dropLast(".ics".count)) }

    /// The first UID of a VEVENT in an iCalendar text.
    static func uid(in bytes: [UInt8]) -> String? {
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix("UID:") {
            return String(line.dropFirst(4))
        }
        return nil
    }

    /// The latest ACKNOWLEDGED of an event's alarms (RFC 9074: a UTC date-time), in seconds since
    /// the epoch; nil when none is answered.
    static func acknowledged(in bytes: [UInt8]) -> gint64? {
        var latest: gint64?
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) where line.hasPrefix("ACKNOWLEDGED") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let digits = Array(line[line.index(after: colon)...].utf8)
            // YYYYMMDDTHHMMSSZ
            guard digits.count == 16, digits[8] == UInt8(ascii: "T"), digits[15] == UInt8(ascii: "Z") else { continue }
            func number(_ range: Range<Int>) -> Int32? {
                var value: Int32 = 0
                for byte in digits[range] {
                    guard byte >= 0x30, byte <= 0x39 else { return nil }
                    value = value * 10 + Int32(byte - 0x30)
                }
                return value
            }
            guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
                let minute = number(11..<13), let second = number(13..<15),
                let moment = g_date_time_new_utc(year, month, day, hour, minute, Double(second))
            else { continue }
            let seconds = g_date_time_to_unix(moment)
            g_date_time_unref(moment)
            latest = max(latest ?? seconds, seconds)
        }
        return latest
    }

    /// FNV-1a, 64 bits, in hex: enough to tell a file from the one written.
    static func hash(_ bytes: [UInt8]) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
        return String(value, radix: 16)
    }
}
