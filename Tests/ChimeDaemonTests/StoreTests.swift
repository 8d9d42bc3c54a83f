import ChimeCenter
import ChimeDaemon
import Foundation
import Testing
import TestSupport
import Timekeeping

@Suite struct StoreTests {
    let directory: URL
    init() throws { directory = try makeTemporaryDirectory("chime-store") }

    func request(_ id: String, _ rule: String = "16:35 mon-fri") throws -> NotificationRequest {
        NotificationRequest(identifier: id, content: NotificationContent(title: id), trigger: try Trigger(parsing: rule, timeZone: "UTC", anchor: 100))
    }

    @Test func everyAcknowledgedChangeSurvivesAReopen() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.append(.add(try request("a")))
        try store.append(.add(try request("b", "in 5m")))
        try store.append(.fired(identifier: "a", due: 500))
        try store.append(.remove(["b"]))
        try store.append(.missed(MissedOccurrence(identifier: "a", due: 900, recorded: 1000)))
        let reopened = try Store(directory: directory.path, now: 2)
        #expect(reopened.state == store.state)
        #expect(reopened.state.schedule.pending.map(\.identifier) == ["a"])
        #expect(reopened.state.lastFired["a"] == 900)
        #expect(reopened.warnings.isEmpty)
    }

    @Test func compactionKeepsTheStateAndEmptiesTheJournal() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        store.compactionThreshold = 10
        for i in 0..<25 { try store.append(.add(try request("r\(i)"))) }
        let journal = try Data(contentsOf: directory.appendingPathComponent("journal.jsonl"))
        #expect(journal.split(separator: UInt8(ascii: "\n")).count == 5)
        let reopened = try Store(directory: directory.path, now: 2)
        #expect(reopened.state.schedule.pending.count == 25)
        for name in ["state.json", "journal.jsonl"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
    }

    @Test func aCorruptSnapshotIsMovedAsideAndReported() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("state.json"))
        let store = try Store(directory: directory.path, now: 1234)
        #expect(store.state == StoreState())
        #expect(store.warnings.count == 1)
        #expect(store.warnings.first?.contains("state.json.corrupt-1234") == true)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("state.json.corrupt-1234").path))
    }

    @Test func aTornLastJournalLineIsDropped() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory.path, now: 1)
        try store.append(.add(try request("kept")))
        let handle = try FileHandle(forWritingTo: directory.appendingPathComponent("journal.jsonl"))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"add":{"_0":{"identifier":"half"#.utf8))
        try handle.close()
        let reopened = try Store(directory: directory.path, now: 2)
        #expect(reopened.state.schedule.pending.map(\.identifier) == ["kept"])
        #expect(reopened.warnings == ["dropped a half-written last line of \(directory.path)/journal.jsonl"])
        // What is appended after the repair is read back: the torn line does not swallow it.
        try reopened.append(.add(try request("after")))
        let again = try Store(directory: directory.path, now: 3)
        #expect(again.state.schedule.pending.map(\.identifier) == ["kept", "after"])
        #expect(again.warnings.isEmpty)
    }

    @Test func anUnusableDirectoryIsAClearError() {
        #expect {
            try Store(directory: "/dev/null/chime", now: 1)
        } throws: { error in
            (error as? StoreError)?.description.hasPrefix("cannot create /dev/null/chime") == true
        }
    }
}
