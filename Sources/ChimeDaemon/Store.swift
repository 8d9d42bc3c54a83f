// The daemon's durable state: one SQLite database in WAL mode with
// synchronous=FULL, so every committed change is fsynced before the call that
// made it returns, and therefore before the D-Bus reply that acknowledges it.
import ChimeCenter
import Notifications
import FoundationEssentials
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why the store could not do what was asked: what it was doing, on which file, and why
/// (SQLite's result code and message, or the system's errno).
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Cause: Hashable, Sendable {
        /// SQLite's extended result code.
        case sqlite(Int32)
        case system(SystemError)
        /// A request that cannot be encoded.
        case encoding
        /// The state directory is not this user's alone.
        case unsafe
    }

    public var operation: String
    public var path: String
    public var message: String
    public var cause: Cause

    init(_ operation: String, path: String, _ message: String, cause: Cause) {
        self.operation = operation
        self.path = path
        self.message = message
        self.cause = cause
    }

    init(_ operation: String, path: String, _ error: SystemError) {
        self.init(operation, path: path, error.description, cause: .system(error))
    }

    public var description: String { "cannot \(operation) \(path): \(message)" }
}

/// A stored request as read back: valid, or kept but not usable (and why).
public enum LoadedRequest: Sendable {
    case valid(NotificationRequest)
    /// Its stored form no longer decodes or validates.
    case invalid(reason: String)
}

/// A pending request's place in time, as stored.
public struct ScheduledTime: Hashable, Sendable {
    public var identifier: String
    /// The next occurrence not yet handled; nil: it never fires again.
    public var nextFire: Instant?
    /// The last occurrence handled (fired or recorded as missed).
    public var lastFired: Instant?
    /// Why it is quarantined (kept, never fired), or nil.
    public var quarantine: String?
    /// Switched off (`chime disable`): kept and listed, never fired, not planned.
    public var disabled = false
    /// A paused timer (`chime pause`): not planned until resumed.
    public var paused = false
}

/// The daemon's state in `directory` (`$XDG_STATE_HOME/chime` by default), in
/// `chime.sqlite3` (mode 0600, schema version in `user_version`). Every time in it is
/// nanoseconds since the epoch (an `Instant`):
///
/// - `pending`: each request as JSON with its next occurrence and the last one handled,
///   plus the title, label and zone `chime list` shows, so listing 100,000 alarms
///   decodes none of them; `quarantine` holds why a request is kept but never fired;
/// - `delivered`: what is on screen (shown and not known to be closed), by notification id, with the
///   server connection that showed it (its popups are gone when it leaves the bus);
/// - `missed`: occurrences that passed too long ago to show, and why;
/// - `held`: occurrences due while no notification server ran, shown when one appears;
/// - `retrying`: occurrences the server failed to show, with the attempt, the next try and why;
/// - `file_alarms`: the alarm file's alarms as last applied (`pending.origin` tells the
///   file's alarms from those added on the command line or over D-Bus);
/// - `suspects`: requests the daemon was firing when it crashed, and how often;
/// - `meta`: the sequence the daemon makes identifiers from.
///
/// Only the queue of (identifier, next fire) lives in the daemon's memory; a
/// request is read (and checked again) when it fires. A file that is not a database,
/// or a damaged one, is moved aside (`chime.sqlite3.corrupt-<unixtime>`) and
/// reported, and the daemon starts empty.
public final class Store {
    public let directory: String
    public let path: String
    /// Problems found while opening (a corrupt store moved aside).
    public private(set) var warnings: [String] = []
    private(set) var database: Database
    private var inTransaction = false
    /// Under the simulator (`simulating()`).
    private var simulated = false
    /// The requests last decoded, with their stored bytes (`loadRequest`): each alarm's is read at
    /// every fire and re-plan, and decoding it is most of the work. At most this many are kept.
    var decodedRequests: [String: (bytes: [UInt8], loaded: LoadedRequest)] = [:]
    static let decodedRequestsKept = 1024

    /// The schema version this chime reads and writes. 1: before the alarm file; 2: times in
    /// seconds but for the next fire; 3: every time in nanoseconds, quarantine, identifiers.
    public static let schemaVersion: Int64 = 4
    public static let fileName = "chime.sqlite3"

    /// The default directory: `$XDG_STATE_HOME/chime`, or `~/.local/state/chime`; nil when neither
    /// is set to an absolute path (never a shared place such as /tmp, where another user could have
    /// made it first).
    public static func defaultDirectory() -> String? {
        if let state = Sys.environment("XDG_STATE_HOME"), state.hasPrefix("/") {
            return state + "/chime"
        }
        guard let home = Sys.environment("HOME"), home.hasPrefix("/") else { return nil }
        return (home == "/" ? "" : home) + "/.local/state/chime"
    }

    /// Opens (creating if needed) the store in `directory`.
    public init(directory: String, now: Instant) throws(StoreError) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        try Self.makeDirectory(directory)
        do {
            database = try Self.open(path)
        } catch let error where error.isCorruption {
            let aside = path + ".corrupt-\(now.seconds)"
            do {
                // The journal and shared memory go with it where they exist (a missing one is fine).
                for suffix in ["-wal", "-shm"] where try Sys.status(path + suffix) != nil { try Sys.rename(path + suffix, to: aside + suffix) }
                try Sys.rename(path, to: aside)
            } catch {
                throw StoreError("move aside the corrupt store", path: path, error)
            }
            warnings.append("\(path) was not a readable store (\(error.message)); moved it to \(aside) and started empty")
            do { database = try Self.open(path) } catch { throw StoreError("open", path: path, error.message, cause: .sqlite(error.code)) }
        } catch {
            throw StoreError("open", path: path, error.message, cause: .sqlite(error.code))
        }
    }

    /// The simulator's store: SQLite's in-memory file `name` (its memdb VFS), shared by the
    /// connections of this process and gone when the last one closes (the simulated world keeps
    /// one open while the daemon is killed and started again). Journal in memory, no sync, the
    /// lock kept (`simulating()`): a simulated month costs no system call for its store.
    public init(simulated name: String) throws(StoreError) {
        directory = name
        path = Self.simulatedPath(name)
        do { database = try Self.open(path, inMemory: true) } catch { throw StoreError("open", path: path, error.message, cause: .sqlite(error.code)) }
        try simulating()
    }

    /// The SQLite URI of the simulator's in-memory store `name`.
    static func simulatedPath(_ name: String) -> String { "file:/\(name)?vfs=memdb" }

    /// Keeps the simulator's in-memory store `name` while no daemon has it open (a connection
    /// that reads nothing and holds no lock).
    public final class SimulatedKeeper {
        private let database: Database
        public init(_ name: String) throws(StoreError) {
            let path = Store.simulatedPath(name)
            do { database = try Database(path: path, uri: true) } catch { throw StoreError("open", path: path, error.message, cause: .sqlite(error.code)) }
        }
        public func close() { database.close() }
    }

    static func makeDirectory(_ path: String) throws(StoreError) {
        var built = ""
        for component in path.split(separator: "/") {
            built += "/" + component
            do { try Sys.makeDirectory(built) } catch { throw StoreError("create the directory", path: built, error) }
        }
        try checkOwnership(path)
        do { try Sys.checkWritable(path) } catch { throw StoreError("write to", path: path, error) }
    }

    /// The state directory is this user's alone: owned by them, and writable by nobody else (who
    /// could otherwise replace the store, or plant the firing marker as a link).
    static func checkOwnership(_ path: String) throws(StoreError) {
        let found: (owner: uid_t, mode: mode_t)?
        do { found = try Sys.ownership(path) } catch { throw StoreError("read", path: path, error) }
        guard let (owner, mode) = found else { throw StoreError("use", path: path, "it does not exist", cause: .unsafe) }
        if owner != Sys.userID {
            throw StoreError("use", path: path, "it belongs to user \(owner), not to this user (\(Sys.userID))", cause: .unsafe)
        }
        if mode & 0o022 != 0 {
            throw StoreError("use", path: path, "others may write to it (mode \(String(mode, radix: 8))); run chmod go-w on it", cause: .unsafe)
        }
    }

    /// The alarm file's alarms as last applied: each definition (its request without the
    /// load time, and whether it is enabled), so a reload touches only what changed.
    private static let fileAlarmsTable = """
        CREATE TABLE IF NOT EXISTS file_alarms(
            identifier TEXT PRIMARY KEY NOT NULL,
            definition TEXT NOT NULL
        ) WITHOUT ROWID;
        """

    /// What schema 3 added to schema 2.
    private static let schema3Tables = """
        CREATE TABLE IF NOT EXISTS suspects(
            identifier TEXT PRIMARY KEY NOT NULL, crashes INTEGER NOT NULL, definition TEXT
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS retrying(
            identifier TEXT NOT NULL, due INTEGER NOT NULL, attempt INTEGER NOT NULL, next_try INTEGER NOT NULL,
            reason TEXT NOT NULL, PRIMARY KEY(identifier, due)
        ) WITHOUT ROWID;
        """

    private static func open(_ path: String, inMemory: Bool = false) throws(DatabaseError) -> Database {
        let database: Database
        if inMemory {
            database = try Database(path: path, uri: true)
            try database.executeScript("PRAGMA foreign_keys=OFF;")
        } else {
            // Created by us first so it is the user's alone; SQLite gives -wal and -shm the same mode.
            // (One that cannot be made here is reported by SQLite's own open, next.)
            if let fd = try? Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW) { try? Sys.close(fd) }
            database = try Database(path: path)
            try database.executeScript("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF;")
            // The log is copied back on a thread of the checkpointer's, not in the commit that grows it.
            let checkpointer = Checkpointer(path: path)
            database.onCommit { checkpointer.committed(pages: $0) }
        }
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
                    origin INTEGER NOT NULL DEFAULT 0,
                    quarantine TEXT,
                    rule TEXT NOT NULL DEFAULT '',
                    sound TEXT NOT NULL DEFAULT ''
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS pending_by_time ON pending(next_fire);
                CREATE TABLE IF NOT EXISTS delivered(
                    identifier TEXT PRIMARY KEY NOT NULL,
                    server_id INTEGER NOT NULL,
                    date INTEGER NOT NULL,
                    content TEXT NOT NULL,
                    server TEXT NOT NULL DEFAULT ''
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS delivered_by_server_id ON delivered(server_id);
                CREATE TABLE IF NOT EXISTS missed(
                    identifier TEXT NOT NULL, due INTEGER NOT NULL, recorded INTEGER NOT NULL, reason TEXT,
                    PRIMARY KEY(identifier, due)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS held(
                    identifier TEXT NOT NULL, due INTEGER NOT NULL,
                    PRIMARY KEY(identifier, due)
                ) WITHOUT ROWID;
                \(fileAlarmsTable)
                \(schema3Tables)
                PRAGMA user_version = \(schemaVersion);
                COMMIT;
                """)
        } else if version < 3 {
            // Schema 1 had no alarm file: every pending alarm came from the command line or D-Bus.
            let schema2 = version == 1 ? "ALTER TABLE pending ADD COLUMN origin INTEGER NOT NULL DEFAULT 0;\n\(fileAlarmsTable)" : ""
            // Schema 2 kept every time but the next fire in seconds.
            try database.executeScript("""
                BEGIN;
                \(schema2)
                ALTER TABLE pending ADD COLUMN quarantine TEXT;
                UPDATE pending SET last_fired = last_fired * 1000000000 WHERE last_fired IS NOT NULL;
                UPDATE delivered SET date = date * 1000000000;
                ALTER TABLE delivered ADD COLUMN server TEXT NOT NULL DEFAULT '';
                UPDATE missed SET due = due * 1000000000, recorded = recorded * 1000000000;
                UPDATE held SET due = due * 1000000000;
                ALTER TABLE missed ADD COLUMN reason TEXT;
                \(schema3Tables)
                PRAGMA user_version = 3;
                COMMIT;
                """)
        }
        if version > 0 && version < 4 {
            // Schema 4 lists each alarm's rule and sound (chime list), written with the row, as the
            // request's D-Bus keys have them; read once here from the stored requests.
            try database.executeScript("""
                BEGIN;
                ALTER TABLE pending ADD COLUMN rule TEXT NOT NULL DEFAULT '';
                ALTER TABLE pending ADD COLUMN sound TEXT NOT NULL DEFAULT '';
                UPDATE pending SET
                    sound = CASE json_extract(request, '$.content.sound.kind')
                        WHEN 'named' THEN coalesce(json_extract(request, '$.content.sound.value'), '')
                        WHEN 'file' THEN coalesce(json_extract(request, '$.content.sound.value'), '')
                        WHEN 'default' THEN 'default'
                        ELSE '' END;
                """)
            // Rules are written out by Swift (16:35 mon-fri, in 5m), as new rows are; in the same
            // transaction, so a crash here leaves schema 3 to migrate again.
            var intervals: [(String, String)] = []
            do {
                try database.query("SELECT identifier, request FROM pending") { row in
                    if let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(row.text(1).utf8)) {
                        intervals.append((row.text(0), request.summaryRule))
                    }
                }
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw DatabaseError(code: 1, message: "\(error)")
            }
            for (identifier, rule) in intervals {
                try database.execute("UPDATE pending SET rule = ? WHERE identifier = ?", [.text(rule), .text(identifier)])
            }
            try database.executeScript("PRAGMA user_version = 4; COMMIT;")
        }
        // Wake alarms (few among many) found by an index of their own: the daemon asks for the
        // earliest after every change. Created on any schema: an older chime ignores it. (It once
        // was `pending_wake`, whose term parsed each request written as JSON: 100,000 times for a
        // big calendar. An older chime makes that one again, and keeps both up to date.)
        try database.executeScript("""
            DROP INDEX IF EXISTS pending_wake;
            CREATE INDEX IF NOT EXISTS pending_waking ON pending(next_fire) WHERE \(wakeTerm);
            """)
        // On a phone every alarm with a sound wakes it, but one told not to: those by an index too.
        try database.executeScript("CREATE INDEX IF NOT EXISTS pending_sounding ON pending(next_fire) WHERE \(soundingTerm);")
        // Quarantined alarms (few, or none) by an index of their own too: `chime status` lists
        // them, and would otherwise read every stored request (30 ms with a 100,000-event calendar).
        try database.executeScript("CREATE INDEX IF NOT EXISTS pending_quarantined ON pending(identifier) WHERE quarantine IS NOT NULL;")
        // What rings now, so a restart rings it on (Ringing.swift); an older chime ignores it.
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS ringing(
                identifier TEXT PRIMARY KEY NOT NULL, server_id INTEGER NOT NULL, due INTEGER NOT NULL,
                started INTEGER NOT NULL, until_time INTEGER NOT NULL, capabilities TEXT NOT NULL
            ) WITHOUT ROWID;
            """)
        // Alarms switched off (kept, listed, never fired); an older chime ignores it (and, finding
        // their next fire empty, does not fire them either).
        try database.executeScript("CREATE TABLE IF NOT EXISTS disabled(identifier TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;")
        // Outputs an insisting alarm unmuted and raised, and how to put them back (Speaker.swift);
        // an older chime ignores it.
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS raised_outputs(
                sink TEXT PRIMARY KEY NOT NULL, muted INTEGER NOT NULL, volumes TEXT NOT NULL, raised_volumes TEXT NOT NULL
            ) WITHOUT ROWID;
            """)
        // Paused timers and the time they had left, in nanoseconds (kept across restarts).
        try database.executeScript("""
            CREATE TABLE IF NOT EXISTS paused(identifier TEXT PRIMARY KEY NOT NULL, remaining INTEGER NOT NULL) WITHOUT ROWID;
            """)
        // Days off as last read from the alarm file ('file': its holiday calendars, working days and
        // time away), and time away set by command ('away'), each as JSON: read at start, before
        // the file is read again, so the first plans already read them. An older chime ignores it.
        try database.executeScript("CREATE TABLE IF NOT EXISTS days_off(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;")
        // The system's zone the next fires were planned in ('zone'): at start, a plan made in another
        // (the zone changed while the daemon was down) is made again. An older chime ignores it.
        try database.executeScript("CREATE TABLE IF NOT EXISTS plan(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;")
        // A repeating alarm's snooze: its next fire is the snooze's end, which a re-plan (a clock
        // jump, a resume, a change of zone or of days off) keeps while it is still the next fire.
        try database.executeScript("CREATE TABLE IF NOT EXISTS snoozed(identifier TEXT PRIMARY KEY NOT NULL, until INTEGER NOT NULL) WITHOUT ROWID;")
        // What a calendar cannot carry of an alarm this machine put into it (a body command, ...):
        // the request as it was set (JSON) and which of its settings are laid over the calendar's.
        try database.executeScript("CREATE TABLE IF NOT EXISTS kept_here(identifier TEXT PRIMARY KEY NOT NULL, request TEXT NOT NULL, settings TEXT NOT NULL) WITHOUT ROWID;")
        // The alarm file's alarms this machine put into calendars (`[[alarm]] calendar`), with the
        // digest of their definition when written: written again when it changes, removed when
        // the file no longer has them (only what this machine put there).
        try database.executeScript("CREATE TABLE IF NOT EXISTS placed_from_file(identifier TEXT PRIMARY KEY NOT NULL, digest TEXT NOT NULL) WITHOUT ROWID;")
        // The listing read from an index of its own, in its order: `ListPending` of 100,000 alarms
        // then scans 10 MB of index instead of sorting the table and its 45 MB of requests.
        // Created on any schema: an older chime ignores it (and keeps it up to date).
        try database.executeScript("CREATE INDEX IF NOT EXISTS pending_listing ON pending(\(listingColumns));")
        // Reading every table once finds a damaged file now rather than at the first alarm.
        try database.executeScript("SELECT count(*) FROM pending; SELECT count(*) FROM delivered;")
        // How many rows `pending` and `file_alarms` hold, kept as rows come and go: counting
        // 100,000 rows behind a big write-ahead log held the loop 25-137 ms (`Status` asks often;
        // the follower makes room for the known once). Temporary, so in no schema; a REPLACE's
        // implicit delete fires the delete trigger only with recursive triggers on.
        try database.executeScript("PRAGMA recursive_triggers = ON; CREATE TEMP TABLE row_counts(name TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL);")
        for table in ["pending", "file_alarms"] {
            try database.executeScript("""
                INSERT INTO temp.row_counts SELECT '\(table)', count(*) FROM main.\(table);
                CREATE TEMP TRIGGER \(table)_added AFTER INSERT ON main.\(table) BEGIN UPDATE row_counts SET n = n + 1 WHERE name = '\(table)'; END;
                CREATE TEMP TRIGGER \(table)_removed AFTER DELETE ON main.\(table) BEGIN UPDATE row_counts SET n = n - 1 WHERE name = '\(table)'; END;
                """)
        }
        return database
    }

    // MARK: - Writing

    /// Everything committed is on disk now (firing records are otherwise fsynced with the next
    /// acknowledged change): before the machine sleeps.
    public func makeDurable() throws(StoreError) {
        do { try database.executeScript("PRAGMA wal_checkpoint(FULL);") } catch {
            throw StoreError("sync", path: path, error.message, cause: .sqlite(error.code))
        }
    }

    func run(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) {
        do { try database.execute(sql, values) } catch { throw StoreError("write", path: path, error.message, cause: .sqlite(error.code)) }
    }

    func run(_ statement: SQLStatement, _ values: [SQLValue] = []) throws(StoreError) {
        do { try database.execute(statement, values) } catch { throw StoreError("write", path: path, error.message, cause: .sqlite(error.code)) }
    }

    /// What is run for each alarm an alarm file's reading stores (100,000 times for a big calendar).
    enum Hot {
        static let insert = SQLStatement("""
            INSERT OR REPLACE INTO pending(identifier, request, next_fire, last_fired, title, label, time_zone, origin, quarantine,
                                           rule, sound)
            VALUES (?, ?, ?, NULL, ?, ?, ?, ?, NULL, ?, ?)
            """)
        static let clear = ["held", "retrying", "suspects", "disabled", "paused", "snoozed"].map { SQLStatement("DELETE FROM \($0) WHERE identifier = ?") }
        static let presence = SQLStatement("""
            SELECT (SELECT origin FROM pending WHERE identifier = ?1),
                   EXISTS(SELECT 1 FROM held WHERE identifier = ?1) OR EXISTS(SELECT 1 FROM retrying WHERE identifier = ?1)
                   OR EXISTS(SELECT 1 FROM suspects WHERE identifier = ?1) OR EXISTS(SELECT 1 FROM disabled WHERE identifier = ?1)
                   OR EXISTS(SELECT 1 FROM paused WHERE identifier = ?1)
            """)
        static let setFileDefinition = SQLStatement("INSERT OR REPLACE INTO file_alarms(identifier, definition) VALUES (?, ?)")
        static let removeFileDefinition = SQLStatement("DELETE FROM file_alarms WHERE identifier = ?")
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
        let toggles = durability == .firing && !simulated
        if toggles { try run("PRAGMA synchronous=NORMAL") }
        defer { if toggles { try? database.execute("PRAGMA synchronous=FULL") } }
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

    /// A request as stored: `JSONEncoder`'s bytes with sorted keys, written without its cost.
    static func encode(_ request: NotificationRequest) -> String { RequestJSON.encode(request) }

    /// Adds or replaces a request with its next occurrence; its history starts over.
    /// `json`, when given, is `request` already encoded.
    public func add(_ request: NotificationRequest, nextFire: Instant?, origin: AlarmOrigin = .commandLine,
                    json encoded: String? = nil) throws(StoreError) {
        let json: String
        if let encoded { json = encoded } else { json = Self.encode(request) }
        try insert(request.identifier, json: json, nextFire: nextFire, title: request.content.title, label: request.content.label,
                   timeZone: request.trigger.timeZone, origin: origin, rule: request.summaryRule, sound: request.summarySound)
    }

    /// Adds or replaces an alarm of the file as its reader gave it (`next`: its first fire).
    /// `fresh`: the store holds nothing under its identifier (not pending, nothing held, retried,
    /// suspected, switched off or paused), so there is nothing to clear first; a big calendar's
    /// first reading adds 100,000 such alarms.
    func add(_ record: ReaderRecord, nextFire: Instant?, fresh: Bool) throws(StoreError) {
        try insert(record.identifier, json: record.json, nextFire: nextFire, title: record.title, label: record.label,
                   timeZone: record.timeZone, origin: .file, rule: record.rule, sound: record.sound, fresh: fresh)
    }

    func insert(_ identifier: String, json: String, nextFire: Instant?, title: String, label: String, timeZone: String?,
                        origin: AlarmOrigin, rule: String, sound: String, fresh: Bool = false) throws(StoreError) {
        try write { () throws(StoreError) in
            if !fresh { try clearState(of: identifier) }
            try run(Hot.insert, [.text(identifier), .text(json), .instant(nextFire), .text(title), .text(label), timeZone.map(SQLValue.text) ?? .null,
                 .integer(origin == .file ? 1 : 0), .text(rule), .text(sound)])
        }
    }

    /// What the store keeps of an alarm beside its request: a request stored anew starts over.
    func clearState(of identifier: String) throws(StoreError) {
        // Held and retried occurrences, crashes charged, and (a request stored anew under the
        // identifier of one switched off, paused or snoozed starts on) disabled, paused and snoozed.
        for statement in Hot.clear { try run(statement, [.text(identifier)]) }
    }

    /// Where a pending request under `identifier` came from (nil: none is pending), and whether
    /// the store keeps anything else under it (what `clearState` clears), in one look.
    public func presence(of identifier: String) throws(StoreError) -> (origin: AlarmOrigin?, state: Bool) {
        var found: (AlarmOrigin?, Bool) = (nil, true)
        try read(Hot.presence, [.text(identifier)]) { row in
            found = (row.optionalInteger(0).map { $0 == 1 ? .file : .commandLine }, row.integer(1) != 0)
        }
        return found
    }

    /// Adds many requests in one transaction (a bulk import).
    public func add(contentsOf requests: [(request: NotificationRequest, nextFire: Instant?)]) throws(StoreError) {
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
                try clearState(of: identifier)
            }
        }
        return removed
    }

    /// Pauses a timer with `remaining` left (its next fire is cleared), or (nil) forgets the pause.
    public func setPaused(_ identifier: String, remaining: TimeSpan?) throws(StoreError) {
        try write { () throws(StoreError) in
            if let remaining {
                try run("INSERT OR REPLACE INTO paused(identifier, remaining) VALUES (?, ?)",
                        [.text(identifier), .integer(remaining.nanoseconds)])
                try run("UPDATE pending SET next_fire = NULL WHERE identifier = ?", [.text(identifier)])
            } else {
                try run("DELETE FROM paused WHERE identifier = ?", [.text(identifier)])
            }
        }
    }

    /// A record of the days off (`file` or `away`), as JSON; nil when none was written.
    public func daysOffRecord(_ key: String) throws(StoreError) -> String? {
        var value: String?
        try read("SELECT value FROM days_off WHERE key = ?", [.text(key)]) { value = $0.text(0) }
        return value
    }

    public func setDaysOffRecord(_ key: String, _ value: String) throws(StoreError) {
        try write { () throws(StoreError) in
            try run("INSERT OR REPLACE INTO days_off(key, value) VALUES (?, ?)", [.text(key), .text(value)])
        }
    }

    /// The repeating alarms snoozed, each until when.
    func snoozes() throws(StoreError) -> [String: Instant] {
        var result: [String: Instant] = [:]
        try read("SELECT identifier, until FROM snoozed", []) { result[$0.text(0)] = Instant(nanosecondsSinceEpoch: $0.integer(1)) }
        return result
    }

    func setSnoozed(_ identifier: String, until: Instant) throws(StoreError) {
        try run("INSERT OR REPLACE INTO snoozed(identifier, until) VALUES (?, ?)", [.text(identifier), .integer(until.nanosecondsSinceEpoch)])
    }

    /// For the simulator, whose kill is a commit refused (SQLite's atomic commit, which holds in any
    /// journal mode), not a process dying mid-write: the journal in memory, no sync, the lock
    /// kept. A simulated month then costs milliseconds, not file writes and locks.
    private func simulating() throws(StoreError) {
        try run("PRAGMA journal_mode=MEMORY")
        try run("PRAGMA synchronous=OFF")
        try run("PRAGMA locking_mode=EXCLUSIVE")
        simulated = true
    }

    /// What the store keeps of how the alarms were planned (the `plan` table): the system's zone
    /// they were planned in, when the zone last changed as the daemon learnt it (the new zone's
    /// times before it never came due), and the latest wall time they were planned from (a start
    /// before it means the clock was set back meanwhile).
    enum PlanKey: String {
        case zone
        case zoneSince = "zone-since"
        case from
    }

    func plan(_ key: PlanKey) throws(StoreError) -> String? {
        var value: String?
        try read("SELECT value FROM plan WHERE key = ?", [.text(key.rawValue)]) { value = $0.text(0) }
        return value
    }

    func setPlan(_ key: PlanKey, _ value: String) throws(StoreError) {
        try write { () throws(StoreError) in try run("INSERT OR REPLACE INTO plan(key, value) VALUES (?, ?)", [.text(key.rawValue), .text(value)]) }
    }

    /// A time kept in the `plan` table (in nanoseconds).
    func planTime(_ key: PlanKey) throws(StoreError) -> Instant? {
        try plan(key).flatMap(Int64.init).map(Instant.init(nanosecondsSinceEpoch:))
    }

    func setPlanTime(_ key: PlanKey, _ time: Instant) throws(StoreError) { try setPlan(key, String(time.nanosecondsSinceEpoch)) }

    public func keptHere() throws(StoreError) -> [String: (request: String, settings: String)] {
        var kept: [String: (request: String, settings: String)] = [:]
        try read("SELECT identifier, request, settings FROM kept_here") { kept[$0.text(0)] = ($0.text(1), $0.text(2)) }
        return kept
    }

    /// Keeps (nil: forgets) what a calendar cannot carry of alarm `identifier`.
    public func setKeptHere(_ identifier: String, request: String?, settings: String) throws(StoreError) {
        try write { () throws(StoreError) in
            if let request {
                try run("INSERT OR REPLACE INTO kept_here(identifier, request, settings) VALUES (?, ?, ?)", [.text(identifier), .text(request), .text(settings)])
            } else {
                try run("DELETE FROM kept_here WHERE identifier = ?", [.text(identifier)])
            }
        }
    }

    public func placedFromFile() throws(StoreError) -> [String: String] {
        var placed: [String: String] = [:]
        try read("SELECT identifier, digest FROM placed_from_file") { placed[$0.text(0)] = $0.text(1) }
        return placed
    }

    public func setPlacedFromFile(_ identifier: String, digest: String?) throws(StoreError) {
        try write { () throws(StoreError) in
            if let digest {
                try run("INSERT OR REPLACE INTO placed_from_file(identifier, digest) VALUES (?, ?)", [.text(identifier), .text(digest)])
            } else {
                try run("DELETE FROM placed_from_file WHERE identifier = ?", [.text(identifier)])
            }
        }
    }

    /// Every paused timer and the time it has left.
    public func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)] {
        var list: [(String, TimeSpan)] = []
        try read("SELECT identifier, remaining FROM paused ORDER BY identifier") { list.append(($0.text(0), TimeSpan(nanoseconds: $0.integer(1)))) }
        return list
    }

    /// Switches an alarm off (its next fire is cleared, and what waited to be shown of it goes) or
    /// back on (the caller sets its next fire).
    public func setDisabled(_ identifier: String, _ disabled: Bool) throws(StoreError) {
        try write { () throws(StoreError) in
            if disabled {
                try run("INSERT OR IGNORE INTO disabled(identifier) VALUES (?)", [.text(identifier)])
                try run("UPDATE pending SET next_fire = NULL WHERE identifier = ?", [.text(identifier)])
                try run("DELETE FROM held WHERE identifier = ?", [.text(identifier)])
                try run("DELETE FROM retrying WHERE identifier = ?", [.text(identifier)])
            } else {
                try run("DELETE FROM disabled WHERE identifier = ?", [.text(identifier)])
            }
        }
    }

    /// Removes every pending request added on the command line or over D-Bus (the alarm
    /// file's stay: the file is where they are changed); returns their identifiers.
    @discardableResult
    public func removeAll() throws(StoreError) -> [String] {
        var removed: [String] = []
        try read("SELECT identifier FROM pending WHERE origin = 0") { removed.append($0.text(0)) }
        try write { () throws(StoreError) in
            try run("DELETE FROM held WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM retrying WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM suspects WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM disabled WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM paused WHERE identifier IN (SELECT identifier FROM pending WHERE origin = 0)")
            try run("DELETE FROM pending WHERE origin = 0")
        }
        return removed
    }

    /// How a wake alarm is told (the partial index `pending_waking` has the same term). Requests
    /// are stored as compact JSON in which `"wake":true` is only ever the content's flag: in a
    /// string a quote is always escaped, and `userInfo`'s values are strings.
    static let wakeTerm = #"instr(request, '"wake":true') > 0"#

    /// An alarm with a sound not told to stay asleep (`"wake":false`, as `wakeTerm` is read):
    /// what wakes a phone (`pending_sounding` has the same term).
    static let soundingTerm = #"sound <> '' AND instr(request, '"wake":false') = 0"#

    /// The earliest wake alarm that will fire (not quarantined): its identifier, time and title.
    /// On a phone (`handset`), an alarm with a sound wakes too unless told not to.
    public func nextWake(handset: Bool = false) throws(StoreError) -> (identifier: String, time: Instant, title: String)? {
        var found: (String, Instant, String)?
        let terms = [("pending_waking", Self.wakeTerm)] + (handset ? [("pending_sounding", Self.soundingTerm)] : [])
        for (index, term) in terms {
            try read("""
                SELECT identifier, next_fire, title FROM pending INDEXED BY \(index)
                WHERE \(term) AND next_fire IS NOT NULL AND quarantine IS NULL ORDER BY next_fire LIMIT 1
                """) { row in
                if found.map({ row.instant(1) < $0.1 }) ?? true { found = (row.text(0), row.instant(1), row.text(2)) }
            }
        }
        return found
    }

    /// The next number of the sequence identifiers are made from (kept across restarts).
    public func nextSequenceNumber() throws(StoreError) -> Int64 {
        var value: Int64 = 1
        try read("SELECT value FROM meta WHERE key = 'sequence'") { value = $0.integer(0) }
        try run("INSERT OR REPLACE INTO meta(key, value) VALUES ('sequence', ?)", [.integer(value + 1)])
        return value
    }

    /// Whether any request, pending or from the alarm file, has this identifier.
    public func identifierInUse(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM pending WHERE identifier = ?1 UNION ALL SELECT 1 FROM file_alarms WHERE identifier = ?1 LIMIT 1",
                 [.text(identifier)]) { _ in found = true }
        return found
    }

    // MARK: - Reading (the queries: Store+Reading.swift)

    func read(_ statement: SQLStatement, _ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws(StoreError) {
        try reading { try database.query(statement, values, body) }
    }

    func read(_ sql: String, _ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws(StoreError) {
        try reading { try database.query(sql, values, body) }
    }

    /// A query's errors as the store's.
    func reading(_ query: () throws -> Void) throws(StoreError) {
        do {
            try query()
        } catch let error as DatabaseError {
            throw StoreError("read", path: path, error.message, cause: .sqlite(error.code))
        } catch {
            throw StoreError("read", path: path, "\(error)", cause: .encoding)
        }
    }
}

// Instants as the store keeps them: INTEGER nanoseconds since the epoch.
extension SQLValue {
    static func instant(_ value: Instant?) -> SQLValue { value.map { .integer($0.nanosecondsSinceEpoch) } ?? .null }
}

extension Row {
    func instant(_ column: Int32) -> Instant { Instant(nanosecondsSinceEpoch: integer(column)) }
    func optionalInstant(_ column: Int32) -> Instant? { optionalInteger(column).map(Instant.init(nanosecondsSinceEpoch:)) }
}

/// An alarm ringing, as the store keeps it: which popup, since when and until when, and what the
/// server that shows it can do (its sound comes from the delivered record).
/// An output an insisting alarm raised: how it was (mute and each channel's volume on the sound
/// server's scale), and the volumes chime set (it is put back only if it still has them).
public struct RaisedOutput: Hashable, Sendable {
    public var sink: String
    public var muted: Bool
    public var volumes: [UInt32]
    public var raisedVolumes: [UInt32]
}

public struct StoredRing: Hashable, Sendable {
    public var identifier: String
    public var serverID: UInt32
    public var due: Instant
    public var started: Instant
    public var until: Instant
    public var capabilities: [Capability]
}
