// The daemon's durable state: a snapshot plus an append-only journal, both
// written and fsynced before a change is acknowledged.
import ChimeCenter
import FoundationEssentials
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Everything the daemon keeps: pending requests, deliveries, when each request last fired, and missed occurrences.
public struct StoreState: Hashable, Sendable, Codable {
    public var schedule = Schedule()
    /// The last occurrence of each request that was handled (fired or recorded as missed).
    public var lastFired: [String: UnixTime] = [:]
    public var missed: [MissedOccurrence] = []

    public init() {}

    /// Applies one journal entry; entries are idempotent, so replaying one twice is harmless.
    public mutating func apply(_ change: Change) {
        switch change {
        case .add(let request):
            schedule.add(request)
        case .remove(let identifiers):
            schedule.removePending(withIdentifiers: identifiers)
            for id in identifiers { lastFired[id] = nil }
        case .removeAll:
            schedule.removeAllPending()
            lastFired.removeAll()
        case .fired(let identifier, let due):
            lastFired[identifier] = max(lastFired[identifier] ?? due, due)
        case .missed(let occurrence):
            if !missed.contains(occurrence) { missed.append(occurrence) }
            lastFired[occurrence.identifier] = max(lastFired[occurrence.identifier] ?? occurrence.due, occurrence.due)
        case .delivered(let notification):
            schedule.recordDelivery(notification)
        case .undelivered(let identifiers):
            _ = schedule.removeDelivered(withIdentifiers: identifiers)
        }
    }
}

/// One change to the state, as the journal records it.
public enum Change: Hashable, Sendable, Codable {
    case add(NotificationRequest)
    case remove([String])
    case removeAll
    case fired(identifier: String, due: UnixTime)
    case missed(MissedOccurrence)
    case delivered(DeliveredNotification)
    case undelivered([String])
}

/// Why the store could not do what was asked: the path and the system's reason.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The state in `directory` (`$XDG_STATE_HOME/chime` by default): `state.json`, a
/// snapshot written to a temporary file, fsynced, renamed and the directory fsynced;
/// and `journal.jsonl`, one change per line, fsynced before `append` returns. A
/// corrupt snapshot is moved aside (`state.json.corrupt-<unixtime>`) and reported,
/// and the daemon starts empty; a torn last journal line (a crash mid-write, never
/// acknowledged) is dropped. Files are the user's alone (mode 0600).
public final class Store {
    public let directory: String
    public private(set) var state: StoreState
    /// Problems found while loading (a corrupt snapshot moved aside, a torn journal line).
    public private(set) var warnings: [String] = []
    private var journal: Int32 = -1
    private var journalEntries = 0

    /// The schema version written to the snapshot.
    public static let schemaVersion = 1
    /// Compact the journal into a new snapshot after this many entries.
    public var compactionThreshold = 1000

    var snapshotPath: String { directory + "/state.json" }
    var journalPath: String { directory + "/journal.jsonl" }

    /// The default directory: `$XDG_STATE_HOME/chime`, or `~/.local/state/chime`.
    public static func defaultDirectory() -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/chime"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/chime"
    }

    /// Opens (creating if needed) the store in `directory` and loads it.
    public init(directory: String, now: UnixTime) throws(StoreError) {
        self.directory = directory
        state = StoreState()
        try Self.makeDirectory(directory)
        try load(now: now)
        journal = open(journalPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard journal >= 0 else { throw StoreError("cannot open \(journalPath): \(Self.reason())") }
    }

    deinit { if journal >= 0 { close(journal) } }

    static func reason() -> String { String(cString: strerror(errno)) }

    static func makeDirectory(_ path: String) throws(StoreError) {
        var built = ""
        for component in path.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                throw StoreError("cannot create \(built): \(reason())")
            }
        }
        guard access(path, W_OK) == 0 else { throw StoreError("cannot write to \(path): \(reason())") }
    }

    // MARK: - Loading

    private func load(now: UnixTime) throws(StoreError) {
        if let bytes = try readIfPresent(snapshotPath) {
            do {
                let document = try JSONDecoder().decode(Snapshot.self, from: Data(bytes))
                state = document.state
            } catch {
                let aside = snapshotPath + ".corrupt-\(now)"
                if rename(snapshotPath, aside) != 0 {
                    throw StoreError("\(snapshotPath) is corrupt and cannot be moved aside: \(Self.reason())")
                }
                warnings.append("\(snapshotPath) was corrupt (\(error)); moved it to \(aside) and started empty")
                state = StoreState()
            }
        }
        if let bytes = try readIfPresent(journalPath) {
            // A crash mid-append leaves a line without its newline: cut it off, or the
            // next append would glue an acknowledged entry onto the torn one.
            if let last = bytes.last, last != UInt8(ascii: "\n") {
                let keep = (bytes.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? 0
                guard truncate(journalPath, off_t(keep)) == 0 else {
                    throw StoreError("cannot repair \(journalPath): \(Self.reason())")
                }
                warnings.append("dropped a half-written last line of \(journalPath)")
            }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where !line.isEmpty {
                do {
                    state.apply(try JSONDecoder().decode(Change.self, from: Data(line)))
                    journalEntries += 1
                } catch {
                    // The torn tail was reported above; anything else is damage worth saying.
                    if index < lines.count - 1 || bytes.last == UInt8(ascii: "\n") {
                        warnings.append("skipped an unreadable line \(index + 1) of \(journalPath)")
                    }
                }
            }
        }
    }

    private func readIfPresent(_ path: String) throws(StoreError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StoreError("cannot read \(path): \(Self.reason())")
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError("cannot read \(path): \(Self.reason())")
            }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    // MARK: - Changing

    /// Applies `change` and makes it durable (written and fsynced) before returning.
    public func append(_ change: Change) throws(StoreError) {
        try append(contentsOf: [change])
    }

    /// Applies `changes` and makes them durable with one write and one fsync.
    public func append(contentsOf changes: [Change]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        var lines: [UInt8] = []
        let encoder = JSONEncoder()
        for change in changes {
            do {
                lines += try encoder.encode(change)
            } catch {
                throw StoreError("cannot encode a change: \(error)")
            }
            lines.append(UInt8(ascii: "\n"))
        }
        // A failed write (a full disk) must not leave half a line for the next append to glue onto.
        let end = lseek(journal, 0, SEEK_END)
        do throws(StoreError) {
            try writeAll(journal, lines, path: journalPath)
            guard fdatasync(journal) == 0 else { throw StoreError("cannot sync \(journalPath): \(Self.reason())") }
        } catch {
            if end >= 0 { _ = ftruncate(journal, end) }
            throw error
        }
        for change in changes { state.apply(change) }
        journalEntries += changes.count
        if journalEntries >= compactionThreshold { try compact() }
    }

    /// Replaces the whole state at once (a bulk import), durably, as one new snapshot.
    public func replaceAll(with newState: StoreState) throws(StoreError) {
        let previous = state
        state = newState
        do {
            try compact()
        } catch {
            state = previous
            throw error
        }
    }

    /// Writes the whole state as a new snapshot and empties the journal.
    public func compact() throws(StoreError) {
        let bytes: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            bytes = try encoder.encode(Snapshot(schema: Self.schemaVersion, state: state))
        } catch {
            throw StoreError("cannot encode the state: \(error)")
        }
        let temporary = snapshotPath + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError("cannot write \(temporary): \(Self.reason())") }
        do throws(StoreError) {
            try writeAll(fd, Array(bytes), path: temporary)
            guard fsync(fd) == 0 else { throw StoreError("cannot sync \(temporary): \(Self.reason())") }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, snapshotPath) == 0 else {
            unlink(temporary)
            throw StoreError("cannot replace \(snapshotPath): \(Self.reason())")
        }
        try syncDirectory()
        // The snapshot now holds every journal entry; replaying them again would be harmless.
        guard ftruncate(journal, 0) == 0, fsync(journal) == 0 else {
            throw StoreError("cannot empty \(journalPath): \(Self.reason())")
        }
        journalEntries = 0
    }

    private func syncDirectory() throws(StoreError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError("cannot open \(directory): \(Self.reason())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError("cannot sync \(directory): \(Self.reason())") }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError("cannot write \(path): \(Self.reason())")
            }
            offset += n
        }
    }

    struct Snapshot: Codable {
        var schema: Int
        var state: StoreState
    }
}
