// A thin layer over SQLite's C API: prepared statements cached by their text,
// values bound by position, rows read by column. Only the store uses it.
internal import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// A value bound to a statement's parameter.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case null

    static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
}

/// A statement the store runs often (for each alarm of a big calendar): prepared once per
/// connection and found again by its identity, where a statement given as text is found by
/// hashing and comparing its text at each use.
final class SQLStatement: Sendable {
    let text: String
    init(_ text: String) { self.text = text }
}

/// What SQLite said went wrong, and whether the file itself is damaged.
struct DatabaseError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var description: String { message }
    /// The file is not a database, or a damaged one.
    var isCorruption: Bool { code & 0xff == SQLITE_CORRUPT || code & 0xff == SQLITE_NOTADB }
}

/// One row of a query, valid only inside the closure it is passed to.
struct Row {
    fileprivate let statement: OpaquePointer

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func optionalInteger(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }

    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : text(column)
    }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's bytes, without making a String of them.
    func withBytes<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let bytes = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        return try body(UnsafeBufferPointer(start: bytes?.assumingMemoryBound(to: UInt8.self), count: count))
    }
}

/// An open SQLite database.
final class Database {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var known: [ObjectIdentifier: OpaquePointer] = [:]
    let path: String

    /// SQLite configured once, before its first connection (it refuses once initialized).
    private static let configured: Void = { _ = chime_sqlite_configure() }()

    /// Opens `path`; with `uri`, `path` is an SQLite URI (the simulator's store in memory:
    /// `file:/name?vfs=memdb`).
    init(path: String, create: Bool = true, uri: Bool = false) throws(DatabaseError) {
        self.path = path
        Self.configured
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0)
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            handle = nil
            throw DatabaseError(code: result, message: "\(path): \(message)")
        }
        sqlite3_extended_result_codes(handle, 1)
        // Another process with the file open (a second daemon racing this one to start, a backup)
        // makes us wait a moment rather than fail at once with "database is locked".
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { close() }

    /// What `onCommit` was given, kept while the hook is set.
    private var commitHook: CommitHook?
    private final class CommitHook {
        let body: (Int32) -> Void
        init(_ body: @escaping (Int32) -> Void) { self.body = body }
    }

    /// Calls `body` with the write-ahead log's size in pages after each commit, in place of
    /// SQLite's automatic checkpoint (the checkpoint is then the caller's to run).
    func onCommit(_ body: @escaping (Int32) -> Void) {
        let hook = CommitHook(body)
        commitHook = hook
        sqlite3_wal_hook(handle, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<CommitHook>.fromOpaque(context).takeUnretainedValue().body(pages)
            return SQLITE_OK
        }, Unmanaged.passUnretained(hook).toOpaque())
    }

    /// What `refusingCommits` was given, kept while the hook is set.
    private var refusal: CommitRefusal?
    private final class CommitRefusal {
        let refuses: () -> Bool
        init(_ refuses: @escaping () -> Bool) { self.refuses = refuses }
    }

    /// Asks `refuses` before every commit (a transaction's or a lone statement's); true turns the
    /// commit into a rollback, as if the process had been killed just before it. The simulator's
    /// crash between two writes.
    func refusingCommits(_ refuses: @escaping () -> Bool) {
        let hook = CommitRefusal(refuses)
        refusal = hook
        sqlite3_commit_hook(handle, { context in
            guard let context else { return 0 }
            return Unmanaged<CommitRefusal>.fromOpaque(context).takeUnretainedValue().refuses() ? 1 : 0
        }, Unmanaged.passUnretained(hook).toOpaque())
    }

    func close() {
        if refusal != nil, let handle { sqlite3_commit_hook(handle, nil, nil) }
        refusal = nil
        if commitHook != nil, let handle { sqlite3_wal_hook(handle, nil, nil) }
        commitHook = nil
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        known.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(code: code, message: "\(path): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// Runs one or more statements without parameters (schema, pragmas).
    func executeScript(_ sql: String) throws(DatabaseError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result) }
    }

    private func prepared(_ statement: SQLStatement) throws(DatabaseError) -> OpaquePointer {
        if let prepared = known[ObjectIdentifier(statement)] { return prepared }
        let prepared = try prepared(statement.text)
        known[ObjectIdentifier(statement)] = prepared
        return prepared
    }

    private func prepared(_ sql: String) throws(DatabaseError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(result) }
        statements[sql] = statement
        return statement
    }

    private func bind(_ statement: OpaquePointer, _ values: [SQLValue]) throws(DatabaseError) {
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let result: Int32 = switch value {
            case .integer(let v): sqlite3_bind_int64(statement, position, v)
            case .null: sqlite3_bind_null(statement, position)
            case .text(let text):
                // Bound with its length: text may hold any UTF-8, NUL included.
                text.withCString { sqlite3_bind_text(statement, position, $0, Int32(text.utf8.count), chime_sqlite_transient()) }
            }
            guard result == SQLITE_OK else { throw error(result) }
        }
    }

    /// Runs a statement that returns no rows.
    func execute(_ sql: String, _ values: [SQLValue] = []) throws(DatabaseError) {
        try execute(prepared: try prepared(sql), values)
    }

    func execute(_ statement: SQLStatement, _ values: [SQLValue] = []) throws(DatabaseError) {
        try execute(prepared: try prepared(statement), values)
    }

    private func execute(prepared statement: OpaquePointer, _ values: [SQLValue]) throws(DatabaseError) {
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        try bind(statement, values)
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE || result == SQLITE_ROW else { throw error(result) }
    }

    /// Runs a query, calling `body` for each row.
    func query(_ sql: String, _ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        try query(prepared: try prepared(sql), values, body)
    }

    func query(_ statement: SQLStatement, _ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
        try query(prepared: try prepared(statement), values, body)
    }

    private func query(prepared statement: OpaquePointer, _ values: [SQLValue], _ body: (Row) throws -> Void) throws {
        defer { sqlite3_reset(statement); sqlite3_clear_bindings(statement) }
        try bind(statement, values)
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { return }
            guard result == SQLITE_ROW else { throw error(result) }
            try body(Row(statement: statement))
        }
    }

    /// The rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rows changed by this connection since it opened (kept counting across rollbacks).
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Runs `body` in one transaction: all of it is durable when this returns, or none of it is applied.
    func transaction(_ body: () throws -> Void) throws {
        try execute("BEGIN IMMEDIATE")
        do {
            try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
