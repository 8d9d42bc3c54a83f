// The daemon's durable state: one SQLite database in WAL mode with
// synchronous=FULL, so every committed change is fsynced before the call that
// made it returns, and therefore before the D-Bus reply that acknowledges it.
import ChimeCenter
import FoundationEssentials
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why the store could not do what was asked: the path and the system's reason.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A pending request's place in time, as stored.
public struct ScheduledTime: Hashable, Sendable {
    public var identifier: String
    /// The next occurrence not yet handled, in nanoseconds since the epoch; nil: it never fires again.
    public var nextFire: Int64?
    /// The last occurrence handled (fired or recorded as missed), in seconds.
    public var lastFired: UnixTime?
}

/// The daemon's state in `directory` (`$XDG_STATE_HOME/chime` by default), in
/// `chime.sqlite3` (mode 0600, schema version in `user_version`):
///
/// - `pending`: each request as JSON with its next occurrence and the last one handled,
///   plus the title, label and zone `chime list` shows, so listing 100,000 alarms
///   decodes none of them;
/// - `delivered`: what is on screen, by notification id;
/// - `missed`: occurrences that passed too long ago to show;
/// - `held`: occurrences due while no notification server ran, shown when one appears;
/// - `file_alarms`: the alarm file's alarms as last applied (`pending.origin` tells the
///   file's alarms from those added on the command line or over D-Bus).
///
/// Only the queue of (identifier, next fire) lives in the daemon's memory; a
/// request is read when it fires. A file that is not a database, or a damaged
/// one, is moved aside (`chime.sqlite3.corrupt-<unixtime>`) and reported, and
/// the daemon starts empty.
public final class Store {
    public let directory: String
    public let path: String
    /// Problems found while opening (a corrupt store moved aside).
    public private(set) var warnings: [String] = []
    private var database: Database
    private var inTransaction = false

    /// The schema version this chime reads and writes (1: before the alarm file; opened, it becomes 2).
    public static let schemaVersion: Int64 = 2
    public static let fileName = "chime.sqlite3"

    /// The default directory: `$XDG_STATE_HOME/chime`, or `~/.local/state/chime`.
    public static func defaultDirectory() -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/chime"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/chime"
    }

    /// Opens (creating if needed) the store in `directory`.
    public init(directory: String, now: UnixTime) throws(StoreError) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        try Self.makeDirectory(directory)
        do {
            database = try Self.open(path)
        } catch let error where error.isCorruption {
            let aside = path + ".corrupt-\(now)"
            for suffix in ["-wal", "-shm"] { rename(path + suffix, aside + suffix) }
            guard rename(path, aside) == 0 else {
                throw StoreError("\(path) is corrupt and cannot be moved aside: \(Self.reason())")
            }
            warnings.append("\(path) was not a readable store (\(error.message)); moved it to \(aside) and started empty")
            do { database = try Self.open(path) } catch { throw StoreError("\(error)") }
        } catch {
            throw StoreError("\(error)")
        }
    }

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

    /// The alarm file's alarms as last applied: each definition (its request without the
    /// load time, and whether it is enabled), so a reload touches only what changed.
    private static let fileAlarmsTable = """
        CREATE TABLE IF NOT EXISTS file_alarms(
            identifier TEXT PRIMARY KEY NOT NULL,
            definition TEXT NOT NULL
        ) WITHOUT ROWID;
        """

    private static func open(_ path: String) throws(DatabaseError) -> Database {
        // Created by us first so it is the user's alone; SQLite gives -wal and -shm the same mode.
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
        let database = try Database(path: path)
        try database.executeScript("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF;")
        var version: Int64 = 0
        do {
            try database.query("PRAGMA user_version") { version = $0.integer(0) }
        } catch let error as DatabaseError {
            throw error
        } catch {}
        if version > schemaVersion {
            throw DatabaseError(code: 1, message: "\(path) was written by a newer chime (schema \(version)); this one reads schema \(schemaVersion)")
        }
        if version == 0 {
            try database.executeScript("""
                BEGIN;
                CREATE TABLE IF NOT EXISTS pending(
                    identifier TEXT PRIMARY KEY NOT NULL,
                    request TEXT NOT NULL,
                    next_fire INTEGER,
                    last_fired INTEGER,
                    title TEXT NOT NULL,
                    label TEXT NOT NULL,
                    time_zone TEXT,
                    origin INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS pending_by_time ON pending(next_fire);
                CREATE TABLE IF NOT EXISTS delivered(
                    identifier TEXT PRIMARY KEY NOT NULL,
                    server_id INTEGER NOT NULL,
                    date INTEGER NOT NULL,
                    content TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS delivered_by_server_id ON delivered(server_id);
                CREATE TABLE IF NOT EXISTS missed(
                    identifier TEXT NOT NULL, due INTEGER NOT NULL, recorded INTEGER NOT NULL,
                    PRIMARY KEY(identifier, due)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS held(
                    identifier TEXT NOT NULL, due INTEGER NOT NULL,
                    PRIMARY KEY(identifier, due)
                ) WITHOUT ROWID;
                \(fileAlarmsTable)
                PRAGMA user_version = \(schemaVersion);
                COMMIT;
                """)
        } else if version == 1 {
            // Schema 1 had no alarm file: every pending alarm came from the command line or D-Bus.
            try database.executeScript("""
                BEGIN;
                ALTER TABLE pending ADD COLUMN origin INTEGER NOT NULL DEFAULT 0;
                \(fileAlarmsTable)
                PRAGMA user_version = 2;
                COMMIT;
                """)
        }
        // Reading every table once finds a damaged file now rather than at the first alarm.
        try database.executeScript("SELECT count(*) FROM pending; SELECT count(*) FROM delivered;")
        return database
    }

    // MARK: - Writing

    private func run(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) {
        do { try database.execute(sql, values) } catch { throw StoreError("cannot write \(path): \(error.message)") }
    }

    /// How a transaction reaches the disk.
    public enum Durability: Sendable {
        /// Fsynced before `write` returns: for every change a D-Bus reply acknowledges.
        case acknowledged
        /// Committed (it survives the daemon crashing) but fsynced with the next acknowledged
        /// change or checkpoint: for what firing records. Lost only with the machine's power, it
        /// makes an alarm ring twice, never not at all, and the next alarm does not wait on the disk.
        case firing
    }

    /// Runs `body` as one transaction: committed when this returns (fsynced, unless `.firing`),
    /// or not applied at all. Calls inside `body` join it.
    public func write(_ durability: Durability = .acknowledged, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        if inTransaction { return try body() }
        if durability == .firing { try run("PRAGMA synchronous=NORMAL") }
        defer { if durability == .firing { try? database.execute("PRAGMA synchronous=FULL") } }
        try run("BEGIN IMMEDIATE")
        inTransaction = true
        defer { inTransaction = false }
        do {
            try body()
            try run("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    /// Adds or replaces a request with its next occurrence (nanoseconds); its history starts over.
    /// `json`, when given, is `request` already encoded.
    public func add(_ request: NotificationRequest, nextFire: Int64?, origin: AlarmOrigin = .commandLine,
                    json encoded: String? = nil) throws(StoreError) {
        let json: String
        do {
            json = try encoded ?? String(decoding: JSONEncoder().encode(request), as: UTF8.self)
        } catch {
            throw StoreError("cannot encode \(request.identifier): \(error)")
        }
        try write { () throws(StoreError) in
            try run("DELETE FROM held WHERE identifier = ?", [.text(request.identifier)])
            try run("""
                INSERT OR REPLACE INTO pending(identifier, request, next_fire, last_fired, title, label, time_zone, origin)
                VALUES (?, ?, ?, NULL, ?, ?, ?, ?)
                """,
                [.text(request.identifier), .text(json), .optional(nextFire), .text(request.content.title),
                 .text(request.content.label), request.trigger.timeZone.map(SQLValue.text) ?? .null,
                 .integer(origin == .file ? 1 : 0)])
        }
    }

    /// Adds many requests in one transaction (a bulk import).
    public func add(contentsOf requests: [(request: NotificationRequest, nextFire: Int64?)]) throws(StoreError) {
        try write { () throws(StoreError) in
            for (request, next) in requests { try add(request, nextFire: next) }
        }
    }

    /// Removes pending requests; returns the identifiers that were pending.
    @discardableResult
    public func remove(_ identifiers: [String]) throws(StoreError) -> [String] {
        var removed: [String] = []
        try write { () throws(StoreError) in
            for identifier in identifiers {
                try run("DELETE FROM pending WHERE identifier = ?", [.text(identifier)])
                if database.changes > 0 { removed.append(identifier) }
                try run("DELETE FROM held WHERE identifier = ?", [.text(identifier)])
            }
        }
        return removed
    }

    /// Removes every pending request added on the command line or over D-Bus (the alarm
    /// file's stay: the file is where they are changed); returns their identifiers.
    @discardableResult
    public func removeAll() throws(StoreError) -> [String] {
        var removed: [String] = []
        try read("SELECT identifier FROM pending WHERE origin = 0") { removed.append($0.text(0)) }
        try write { () throws(StoreError) in
            try run("DELETE FROM held WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM pending WHERE origin = 0")
        }
        return removed
    }

    // MARK: - The alarm file's alarms

    /// Each alarm-file alarm's definition as last applied, by identifier.
    public func fileDefinitions() throws(StoreError) -> [String: String] {
        var definitions: [String: String] = [:]
        try read("SELECT identifier, definition FROM file_alarms") { definitions[$0.text(0)] = $0.text(1) }
        return definitions
    }

    /// Records (or, with nil, forgets) the definition applied for an alarm-file alarm.
    public func setFileDefinition(_ identifier: String, _ definition: String?) throws(StoreError) {
        if let definition {
            try run("INSERT OR REPLACE INTO file_alarms(identifier, definition) VALUES (?, ?)", [.text(identifier), .text(definition)])
        } else {
            try run("DELETE FROM file_alarms WHERE identifier = ?", [.text(identifier)])
        }
    }

    /// Whether `identifier` belongs to the alarm file (pending or not: a one-off from the file
    /// that has fired still names the file's alarm).
    public func isFileAlarm(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM file_alarms WHERE identifier = ? LIMIT 1", [.text(identifier)]) { _ in found = true }
        return found
    }

    /// Where a pending request came from; nil when nothing is pending under `identifier`.
    public func origin(of identifier: String) throws(StoreError) -> AlarmOrigin? {
        var origin: AlarmOrigin?
        try read("SELECT origin FROM pending WHERE identifier = ?", [.text(identifier)]) { origin = $0.integer(0) == 1 ? .file : .commandLine }
        return origin
    }

    /// Moves a request to its next occurrence (nanoseconds; nil: none), noting `handled` (seconds) as done.
    public func setNextFire(_ identifier: String, _ next: Int64?, handled: UnixTime? = nil) throws(StoreError) {
        try run("""
            UPDATE pending SET next_fire = ?1, last_fired = max(coalesce(last_fired, ?2), coalesce(?2, last_fired))
            WHERE identifier = ?3
            """, [.optional(next), .optional(handled), .text(identifier)])
    }

    public func recordDelivered(_ notification: DeliveredNotification) throws(StoreError) {
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(notification.content), as: UTF8.self)
        } catch {
            throw StoreError("cannot encode \(notification.identifier): \(error)")
        }
        try run("INSERT OR REPLACE INTO delivered(identifier, server_id, date, content) VALUES (?, ?, ?, ?)",
                [.text(notification.identifier), .integer(Int64(notification.serverID)), .integer(notification.date), .text(json)])
    }

    public func removeDelivered(_ identifiers: [String]) throws(StoreError) {
        try write { () throws(StoreError) in
            for identifier in identifiers { try run("DELETE FROM delivered WHERE identifier = ?", [.text(identifier)]) }
        }
    }

    public func recordMissed(_ occurrences: [MissedOccurrence]) throws(StoreError) {
        try write { () throws(StoreError) in
            for occurrence in occurrences {
                try run("INSERT OR IGNORE INTO missed(identifier, due, recorded) VALUES (?, ?, ?)",
                        [.text(occurrence.identifier), .integer(occurrence.due), .integer(occurrence.recorded)])
            }
        }
    }

    /// Notes an occurrence due while no server ran.
    public func hold(_ identifier: String, due: UnixTime) throws(StoreError) {
        try run("INSERT OR IGNORE INTO held(identifier, due) VALUES (?, ?)", [.text(identifier), .integer(due)])
    }

    public func release(_ identifier: String, due: UnixTime) throws(StoreError) {
        try run("DELETE FROM held WHERE identifier = ? AND due = ?", [.text(identifier), .integer(due)])
    }

    // MARK: - Reading

    private func read(_ sql: String, _ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws(StoreError) {
        do { try database.query(sql, values, body) } catch { throw StoreError("cannot read \(path): \(error)") }
    }

    /// Every pending request's next and last occurrence (start-up builds its queue from these).
    public func scheduledTimes() throws(StoreError) -> [ScheduledTime] {
        var times: [ScheduledTime] = []
        try read("SELECT identifier, next_fire, last_fired FROM pending") { row in
            times.append(ScheduledTime(identifier: row.text(0), nextFire: row.optionalInteger(1), lastFired: row.optionalInteger(2)))
        }
        return times
    }

    public var pendingCount: Int {
        var count = 0
        try? read("SELECT count(*) FROM pending") { count = Int($0.integer(0)) }
        return count
    }

    /// The pending request with this identifier.
    public func request(withIdentifier identifier: String) throws(StoreError) -> NotificationRequest? {
        var request: NotificationRequest?
        try read("SELECT request FROM pending WHERE identifier = ?", [.text(identifier)]) { row in
            request = try row.withBytes(0) { try JSONDecoder().decode(NotificationRequest.self, from: Data($0)) }
        }
        return request
    }

    public func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime? {
        var time: ScheduledTime?
        try read("SELECT next_fire, last_fired FROM pending WHERE identifier = ?", [.text(identifier)]) { row in
            time = ScheduledTime(identifier: identifier, nextFire: row.optionalInteger(0), lastFired: row.optionalInteger(1))
        }
        return time
    }

    private static let bySoonest = "ORDER BY next_fire IS NULL, next_fire, identifier"

    /// Pending requests, soonest first (never-firing ones last), with their next fire in seconds.
    public func pendingRequests() throws(StoreError) -> [PendingRequest] {
        var list: [PendingRequest] = []
        let decoder = JSONDecoder()
        try read("SELECT request, next_fire FROM pending \(Self.bySoonest)") { row in
            let request = try row.withBytes(0) { try decoder.decode(NotificationRequest.self, from: Data($0)) }
            list.append(PendingRequest(request: request, nextFire: row.optionalInteger(1).map { $0 / 1_000_000_000 }))
        }
        return list
    }

    /// What `chime list` shows of each pending request, soonest first, read without decoding any request.
    public func pendingSummaries() throws(StoreError) -> [PendingSummary] {
        var list: [PendingSummary] = []
        try read("SELECT identifier, next_fire, title, label, time_zone, origin FROM pending \(Self.bySoonest)") { row in
            list.append(PendingSummary(
                identifier: row.text(0), nextFire: row.optionalInteger(1).map { $0 / 1_000_000_000 }, title: row.text(2),
                label: row.text(3), timeZone: row.optionalText(4), origin: row.integer(5) == 1 ? .file : .commandLine))
        }
        return list
    }

    /// The same list as JSON (`[PendingSummary]`), written straight from the rows: listing
    /// 100,000 alarms builds no Swift value per alarm.
    public func pendingSummariesJSON(limit: Int) throws(StoreError) -> [UInt8]? {
        var out: [UInt8] = [UInt8(ascii: "[")]
        var tooLarge = false
        try read("SELECT identifier, next_fire, title, label, time_zone, origin FROM pending \(Self.bySoonest)") { row in
            guard !tooLarge else { return }
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out += #"{"identifier":"#.utf8
            row.withBytes(0) { appendJSONString($0, to: &out) }
            if let next = row.optionalInteger(1) {
                out += #","nextFire":"#.utf8
                out += String(next / 1_000_000_000).utf8
            }
            out += #","title":"#.utf8
            row.withBytes(2) { appendJSONString($0, to: &out) }
            out += #","label":"#.utf8
            row.withBytes(3) { appendJSONString($0, to: &out) }
            if row.optionalText(4) != nil {
                out += #","timeZone":"#.utf8
                row.withBytes(4) { appendJSONString($0, to: &out) }
            }
            if row.integer(5) == 1 { out += #","origin":"file""#.utf8 }
            out.append(UInt8(ascii: "}"))
            if out.count > limit { tooLarge = true }
        }
        out.append(UInt8(ascii: "]"))
        return tooLarge ? nil : out
    }

    public func deliveredNotifications() throws(StoreError) -> [DeliveredNotification] {
        try deliveredNotifications(where: "", [])
    }

    func deliveredNotifications(where condition: String, _ values: [SQLValue]) throws(StoreError) -> [DeliveredNotification] {
        var list: [DeliveredNotification] = []
        let decoder = JSONDecoder()
        try read("SELECT identifier, server_id, date, content FROM delivered \(condition) ORDER BY date, identifier", values) { row in
            let content = try row.withBytes(3) { try decoder.decode(NotificationContent.self, from: Data($0)) }
            list.append(DeliveredNotification(identifier: row.text(0), serverID: UInt32(truncatingIfNeeded: row.integer(1)),
                                              date: row.integer(2), content: content))
        }
        return list
    }

    public func delivered(identifier: String) throws(StoreError) -> DeliveredNotification? {
        try deliveredNotifications(where: "WHERE identifier = ?", [.text(identifier)]).first
    }

    public func delivered(serverID: UInt32) throws(StoreError) -> DeliveredNotification? {
        try deliveredNotifications(where: "WHERE server_id = ?", [.integer(Int64(serverID))]).first
    }

    public func missedOccurrences() throws(StoreError) -> [MissedOccurrence] {
        var list: [MissedOccurrence] = []
        try read("SELECT identifier, due, recorded FROM missed ORDER BY due, identifier") { row in
            list.append(MissedOccurrence(identifier: row.text(0), due: row.integer(1), recorded: row.integer(2)))
        }
        return list
    }

    /// Occurrences held for a notification server, oldest first.
    public func held() throws(StoreError) -> [(identifier: String, due: UnixTime)] {
        var list: [(String, UnixTime)] = []
        try read("SELECT identifier, due FROM held ORDER BY due, identifier") { list.append(($0.text(0), $0.integer(1))) }
        return list
    }

    public func isHeld(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM held WHERE identifier = ? LIMIT 1", [.text(identifier)]) { _ in found = true }
        return found
    }
}
