import ChimeCenter
@testable import ChimeDaemon
import Foundation
import Testing
import TestSupport
import Timekeeping

@Suite struct StoreTests {
    let directory: URL
    init() throws { directory = try makeTemporaryDirectory("chime-store") }

    func request(_ id: String, _ rule: String = "16:35 mon-fri", title: String? = nil, label: String = "") throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: title ?? id, label: label),
                            trigger: try Trigger(parsing: rule, timeZone: "UTC", anchor: 100))
    }

    var databasePath: String { directory.appendingPathComponent(Store.fileName).path }

    @Test func everyAcknowledgedChangeSurvivesAReopen() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        let a = try request("a")
        try store.add(a, nextFire: Instant(nanosecondsSinceEpoch: 1_000_000_000_500))
        try store.add(try request("b", "in 5m"), nextFire: Instant(nanosecondsSinceEpoch: 400_000_000_000))
        try store.add(try request("c", "2001-01-01 00:00"), nextFire: nil)
        try store.setNextFire("a", Instant(nanosecondsSinceEpoch: 2_000_000_000_000), handled: 500)
        try store.remove(["b"])
        try store.recordMissed([MissedOccurrence(identifier: "a", due: 900, recorded: 1000)])
        try store.recordDelivered(DeliveredNotification(identifier: "a", serverID: 7, date: 510, content: a.content))
        try store.hold("a", due: 950)

        let reopened = try Store(directory: directory.path, now: 2)
        #expect(reopened.warnings.isEmpty)
        #expect(try reopened.request(withIdentifier: "a") == a)
        #expect(try reopened.request(withIdentifier: "b") == nil)
        #expect(try reopened.scheduledTime(of: "a") == ScheduledTime(identifier: "a", nextFire: Instant(nanosecondsSinceEpoch: 2_000_000_000_000), lastFired: 500))
        // Soonest first, never-firing last.
        #expect(try reopened.pendingSummaries().map(\.identifier) == ["a", "c"])
        #expect(try reopened.pendingSummaries().map(\.nextFire) == [2000, nil])
        #expect(try reopened.missedOccurrences() == [MissedOccurrence(identifier: "a", due: 900, recorded: 1000)])
        #expect(try reopened.delivered(serverID: 7)?.identifier == "a")
        #expect(try reopened.held().map(\.identifier) == ["a"])
        // Replacing a request starts its history over and drops what was held for it.
        try reopened.add(a, nextFire: Instant(nanosecondsSinceEpoch: 3_000_000_000_000))
        #expect(try reopened.scheduledTime(of: "a")?.lastFired == nil)
        #expect(try reopened.held().isEmpty)
    }

    @Test func onlyAWakeAlarmIsTheNextWakeWhateverTheOthersSay() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        // Text that spells the flag, in every place text goes: none of it wakes.
        var spelled = try request("spelled", title: #""wake":true"#, label: #"{"wake":true}"#)
        spelled.content.body = #"\"wake\":true "wake":true"#
        spelled.content.userInfo = ["wake": "true", #""wake":true"#: #""wake":true"#]
        try store.add(spelled, nextFire: 5)
        #expect(try store.nextWake() == nil)
        var waking = try request("waking")
        waking.content.wake = true
        try store.add(waking, nextFire: 9)
        var later = try request("later")
        later.content.wake = true
        try store.add(later, nextFire: 20)
        #expect(try store.nextWake()?.identifier == "waking")
        try store.remove(["waking"])
        #expect(try store.nextWake()?.identifier == "later")
        // And after a reopen (the index is made once, and kept).
        let reopened = try Store(directory: directory.path, now: 2)
        #expect(try reopened.nextWake()?.identifier == "later")
    }

    @Test func aFailedTransactionLeavesNothingBehind() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.add(try request("kept"), nextFire: 5)
        #expect(throws: StoreError.self) {
            try store.write { () throws(StoreError) in
                try store.add(try! request("half"), nextFire: 6)
                try store.remove(["kept"])
                throw StoreError("write", path: "test", "the disk is full", cause: .encoding)
            }
        }
        let reopened = try Store(directory: directory.path, now: 2)
        #expect(try reopened.pendingSummaries().map(\.identifier) == ["kept"])
    }

    @Test func thePendingCountIsKeptAsRowsComeAndGo() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.add(try request("a"), nextFire: 5)
        try store.add(try request("b"), nextFire: 6)
        #expect(store.pendingCount == 2)
        // Replaced, not added again.
        try store.add(try request("a", "in 5m"), nextFire: 7)
        #expect(store.pendingCount == 2)
        // A transaction that fails takes its counting with it.
        #expect(throws: StoreError.self) {
            try store.write { () throws(StoreError) in
                try store.add(try! request("c"), nextFire: 8)
                try store.remove(["a", "b"])
                throw StoreError("write", path: "test", "the disk is full", cause: .encoding)
            }
        }
        #expect(store.pendingCount == 2)
        try store.remove(["a", "nobody"])
        #expect(store.pendingCount == 1)
        try store.quarantine("b", reason: "test")
        #expect(store.pendingCount == 1)
        #expect(try Store(directory: directory.path, now: 2).pendingCount == 1)
        // The alarm file's definitions are counted the same way.
        try store.setFileDefinition("f1", "one")
        try store.setFileDefinition("f2", "two")
        try store.setFileDefinition("f1", "one, changed")
        #expect(try store.fileAlarmCount() == 2)
        try store.setFileDefinition("f2", nil)
        try store.setFileDefinition("f3", nil)
        #expect(try store.fileAlarmCount() == 1)
        #expect(try Store(directory: directory.path, now: 3).fileAlarmCount() == 1)
    }

    @Test func theFilesAreTheUsersAlone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.add(try request("a"), nextFire: 5)
        for name in [Store.fileName, Store.fileName + "-wal"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
    }

    @Test func aFileThatIsNoStoreIsMovedAsideAndReported() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: databasePath))
        let store = try Store(directory: directory.path, now: 1234)
        #expect(store.pendingCount == 0)
        #expect(store.warnings.count == 1)
        #expect(store.warnings.first?.contains("\(Store.fileName).corrupt-1234") == true)
        #expect(FileManager.default.fileExists(atPath: databasePath + ".corrupt-1234"))
        // And the new store works.
        try store.add(try request("a"), nextFire: 5)
        #expect(try Store(directory: directory.path, now: 1235).pendingCount == 1)
    }

    @Test func aSchemaOneStoreIsMigratedWithItsAlarmsAsCommandLineOnes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // The tables as chime wrote them before the alarm file (schema 1), with one alarm.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = try Database(path: databasePath)
        let a = try request("a", label: "old")
        let json = String(decoding: try JSONEncoder().encode(a), as: UTF8.self)
        try old.executeScript("""
            CREATE TABLE pending(identifier TEXT PRIMARY KEY NOT NULL, request TEXT NOT NULL, next_fire INTEGER,
                last_fired INTEGER, title TEXT NOT NULL, label TEXT NOT NULL, time_zone TEXT) WITHOUT ROWID;
            CREATE TABLE delivered(identifier TEXT PRIMARY KEY NOT NULL, server_id INTEGER NOT NULL, date INTEGER NOT NULL,
                content TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE missed(identifier TEXT NOT NULL, due INTEGER NOT NULL, recorded INTEGER NOT NULL,
                PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            CREATE TABLE held(identifier TEXT NOT NULL, due INTEGER NOT NULL, PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            PRAGMA user_version = 1;
            """)
        try old.execute("INSERT INTO pending VALUES (?, ?, 5000000000, NULL, 'a', 'old', 'UTC')", [.text("a"), .text(json)])
        old.close()

        let store = try Store(directory: directory.path, now: 10)
        #expect(store.warnings.isEmpty)
        #expect(try store.request(withIdentifier: "a") == a)
        #expect(try store.origin(of: "a") == .commandLine)
        #expect(try store.pendingSummaries() == [PendingSummary(identifier: "a", nextFire: 5, title: "a", label: "old", timeZone: "UTC",
                                                                rule: "16:35 mon-fri")])
        #expect(try store.fileDefinitions().isEmpty)
        try store.add(try request("f"), nextFire: Instant(nanosecondsSinceEpoch: 6_000_000_000), origin: .file)
        try store.setFileDefinition("f", "enabled {}")
        var version: Int64 = 0
        try Database(path: databasePath).query("PRAGMA user_version") { version = $0.integer(0) }
        #expect(version == Store.schemaVersion)
        // Reopened at schema 2: nothing is migrated twice.
        let again = try Store(directory: directory.path, now: 11)
        #expect(try again.origin(of: "f") == .file)
        #expect(try again.fileDefinitions() == ["f": "enabled {}"])
    }

    /// chime 0.2's first stores (schema 3) gain the rule and sound chime list shows, read from
    /// each stored request: calendar, interval and instant rules, every kind of sound.
    @Test func aSchemaThreeStoreGainsRulesAndSoundsForTheListing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = try Database(path: databasePath)
        try old.executeScript("""
            CREATE TABLE pending(identifier TEXT PRIMARY KEY NOT NULL, request TEXT NOT NULL, next_fire INTEGER,
                last_fired INTEGER, title TEXT NOT NULL, label TEXT NOT NULL, time_zone TEXT,
                origin INTEGER NOT NULL DEFAULT 0, quarantine TEXT) WITHOUT ROWID;
            CREATE TABLE delivered(identifier TEXT PRIMARY KEY NOT NULL, server_id INTEGER NOT NULL, date INTEGER NOT NULL,
                content TEXT NOT NULL, server TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
            CREATE TABLE missed(identifier TEXT NOT NULL, due INTEGER NOT NULL, recorded INTEGER NOT NULL, reason TEXT,
                PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            CREATE TABLE held(identifier TEXT NOT NULL, due INTEGER NOT NULL, PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            CREATE TABLE file_alarms(identifier TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE suspects(identifier TEXT PRIMARY KEY NOT NULL, crashes INTEGER NOT NULL, definition TEXT) WITHOUT ROWID;
            CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE retrying(identifier TEXT NOT NULL, due INTEGER NOT NULL, attempt INTEGER NOT NULL,
                next_try INTEGER NOT NULL, reason TEXT NOT NULL, PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            PRAGMA user_version = 3;
            """)
        var weekday = try request("weekday")
        weekday.content.sound = .named("bell")
        var timer = try request("timer", "every 25m")
        timer.content.sound = .default
        var once = NotificationRequest(identifier: "once", content: NotificationContent(title: "once"),
                                       trigger: Trigger(rule: .instant(5), repeats: false, timeZone: nil, anchor: 1))
        once.content.sound = .file("/usr/share/sounds/x.oga")
        for (index, r) in [weekday, timer, once].enumerated() {
            try old.execute("INSERT INTO pending VALUES (?, ?, ?, NULL, ?, '', NULL, 0, NULL)",
                            [.text(r.identifier), .text(String(decoding: try JSONEncoder().encode(r), as: UTF8.self)),
                             .integer(Int64(index + 1) * 1_000_000_000), .text(r.identifier)])
        }
        old.close()

        let store = try Store(directory: directory.path, now: 10)
        let listed = try store.pendingSummaries().map { [$0.identifier, $0.rule, $0.sound] }
        #expect(listed == [["weekday", "16:35 mon-fri", "bell"], ["timer", "every 25m", "default"],
                           ["once", "", "/usr/share/sounds/x.oga"]])
        var version: Int64 = 0
        try Database(path: databasePath).query("PRAGMA user_version") { version = $0.integer(0) }
        #expect(version == 4)
    }

    @Test func aSchemaTwoStoreHasItsTimesMadeNanoseconds() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // chime 0.1 (schema 2) kept every time in seconds but the next fire.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let old = try Database(path: databasePath)
        let a = try request("a")
        let json = String(decoding: try JSONEncoder().encode(a), as: UTF8.self)
        try old.executeScript("""
            CREATE TABLE pending(identifier TEXT PRIMARY KEY NOT NULL, request TEXT NOT NULL, next_fire INTEGER,
                last_fired INTEGER, title TEXT NOT NULL, label TEXT NOT NULL, time_zone TEXT,
                origin INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE TABLE delivered(identifier TEXT PRIMARY KEY NOT NULL, server_id INTEGER NOT NULL, date INTEGER NOT NULL,
                content TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE missed(identifier TEXT NOT NULL, due INTEGER NOT NULL, recorded INTEGER NOT NULL,
                PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            CREATE TABLE held(identifier TEXT NOT NULL, due INTEGER NOT NULL, PRIMARY KEY(identifier, due)) WITHOUT ROWID;
            CREATE TABLE file_alarms(identifier TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO missed VALUES ('a', 900, 1000);
            INSERT INTO held VALUES ('a', 950);
            PRAGMA user_version = 2;
            """)
        try old.execute("INSERT INTO pending VALUES ('a', ?, 5000000000, 500, 'a', '', 'UTC', 0)", [.text(json)])
        try old.execute("INSERT INTO delivered VALUES ('a', 7, 510, ?)", [.text(String(decoding: try JSONEncoder().encode(a.content), as: UTF8.self))])
        old.close()

        let store = try Store(directory: directory.path, now: 10)
        #expect(try store.scheduledTime(of: "a") == ScheduledTime(identifier: "a", nextFire: 5, lastFired: 500))
        #expect(try store.missedOccurrences() == [MissedOccurrence(identifier: "a", due: 900, recorded: 1000)])
        #expect(try store.held().map(\.due) == [950])
        #expect(try store.delivered(serverID: 7)?.date == 510)
        #expect(try store.request(withIdentifier: "a") == a)
        // Opened again, nothing is multiplied twice.
        #expect(try Store(directory: directory.path, now: 11).scheduledTime(of: "a")?.lastFired == 500)
    }

    @Test func removeAllLeavesTheAlarmFilesAlarms() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.add(try request("cli"), nextFire: 5)
        try store.add(try request("file"), nextFire: 6, origin: .file)
        try store.setFileDefinition("file", "x")
        try store.hold("cli", due: 1)
        try store.hold("file", due: 2)
        #expect(try store.removeAll() == ["cli"])
        #expect(try store.pendingSummaries().map(\.identifier) == ["file"])
        #expect(try store.held().map(\.identifier) == ["file"])
        #expect(try store.isFileAlarm("file"))
        #expect(try !store.isFileAlarm("cli"))
        // The listing says where each came from, and what holds it.
        #expect(try store.pendingSummaries() == [PendingSummary(identifier: "file", nextFire: 6, title: "file", label: "",
                                                                timeZone: "UTC", origin: .file, state: .held,
                                                                note: "no notification server since \(Zone.system().iso8601(Instant(seconds: 2)))",
                                                                rule: "16:35 mon-fri")])
    }

    @Test func aStoreFromANewerChimeIsAClearErrorAndLeftAlone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Store(directory: directory.path, now: 1)
        let database = try Database(path: databasePath)
        try database.executeScript("PRAGMA user_version = 99")
        database.close()
        #expect {
            try Store(directory: directory.path, now: 2)
        } throws: { error in
            "\(error)".contains("written by a newer chime (schema 99)")
        }
        #expect(FileManager.default.fileExists(atPath: databasePath))
    }

    @Test func theSummaryCrossesTheBusUnchanged() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        let awkward = ["plain", "quote \" and \\ backslash", "line\nbreak\ttab\u{01}", "ünïcödé ⏰ 🥚", ""]
        for (i, title) in awkward.enumerated() {
            var r = try request("id-\(i)", title: title.isEmpty ? "x" : title, label: awkward[(i + 1) % awkward.count])
            if i % 2 == 0 { r.trigger.timeZone = nil }
            try store.add(r, nextFire: i == 3 ? nil : Instant(seconds: Int64(i)))
        }
        try store.quarantine("id-4", reason: "a reason")
        let summaries = try store.pendingSummaries()
        #expect(try summaries.map { try PendingSummary(dbus: $0.dbusValue) } == summaries)
        #expect(summaries.count == awkward.count)
        #expect(summaries.first { $0.identifier == "id-4" }?.state == .quarantined)
    }

    @Test func anUnusableDirectoryIsAClearError() {
        #expect {
            try Store(directory: "/dev/null/chime", now: 1)
        } throws: { error in
            (error as? StoreError)?.description.hasPrefix("cannot create the directory /dev/null") == true
        }
    }
}
