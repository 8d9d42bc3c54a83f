@testable import ChimeDaemon
import ChimeCenter
import Foundation
import Testing
import TestSupport
import Timekeeping

/// The alarm file and its calendars are read by a child of the daemon (`chime daemon
/// --read-alarm-file`), against the real daemon: it answers and rings while the reader works, a
/// reader that hangs is stopped at its time limit and what it hung on is left out, and a reader
/// that writes nonsense changes nothing.
@Suite struct ReaderTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws { bus = try PrivateBus() }

    static func calendar(uid: String, start: String) -> String {
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//somebody//EN", "BEGIN:VEVENT", "UID:\(uid)", "DTSTAMP:\(TestDates.utcDay(in: -7).icsUTC)",
         "DTSTART:\(start)", "SUMMARY:Shared \(start)", "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT5M", "END:VALARM", "END:VEVENT",
         "END:VCALENDAR", ""].joined(separator: "\r\n")
    }

    func files(_ extra: String = "") throws -> (calendar: String, alarms: String) {
        let calendar = bus.directory.appendingPathComponent("shared.ics").path
        try Self.calendar(uid: "shared-1", start: TestDates.utcDay(in: 365).icsUTC).write(toFile: calendar, atomically: true, encoding: .utf8)
        let alarms = bus.directory.appendingPathComponent("alarms.toml").path
        try """
            [[alarm]]
            id = "own"
            title = "Own"
            when = "09:00"
            \(extra)
            [[calendar]]
            path = "\(calendar)"
            """.write(toFile: alarms, atomically: true, encoding: .utf8)
        return (calendar, alarms)
    }

    /// While the reader is still at a calendar, the daemon answers, says it is reading, and rings
    /// an alarm set meanwhile on time; once the reader is done, the calendar's alarm is there.
    @Test func theDaemonAnswersAndRingsWhileItsReaderWorks() throws {
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let (calendar, alarms) = try files()
        let release = bus.directory.appendingPathComponent("release").path
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, waitForFile: false, arguments: ["--config", alarms],
                                       environment: ["CHIME_TEST_HANG_READING": calendar, "CHIME_TEST_HANG_UNTIL": release])
        defer { daemon.stop() }
        #expect(try waitUntil { try center().alarmFileStatus().reading })
        let set = try runChime(["in", "1s", "Meanwhile"], environment: bus.environment())
        #expect(set.status == 0, "\(set.stderr)")
        #expect(recorder.waitForCalls(1).map(\.summary) == ["Meanwhile"])
        // (The reader waits for the test: it is still reading.)
        #expect(try center().alarmFileStatus().reading)
        #expect(try runChime(["status"], environment: bus.environment()).stdout.contains("reading it now"))
        _ = FileManager.default.createFile(atPath: release, contents: Data())
        #expect(try waitUntil { try !center().alarmFileStatus().reading })
        #expect(try center().pendingSummaries().map(\.identifier).sorted() == ["ics-shared-1", "own"])
        #expect(daemon.isRunning)
    }

    /// An alarm of the file that came due while the daemon was down, and was changed meanwhile, is
    /// not caught up in its old form: its catch-up waits for the file's first reading.
    @Test func anOverdueAlarmChangedWhileDownIsNotCaughtUpInItsOldForm() throws {
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let alarms = bus.directory.appendingPathComponent("alarms.toml").path
        func write(_ title: String) throws {
            try """
                [[alarm]]
                id = "tea"
                title = "\(title)"
                when = "every 5s"
                """.write(toFile: alarms, atomically: true, encoding: .utf8)
        }
        try write("Old")
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms])
        let due = try #require(try center().pendingSummaries().first?.nextFire)
        daemon.stop()
        try write("New")
        // Down past its time (waited on the wall clock, which is what makes it overdue).
        while WallClock.system.now() <= due { usleep(50_000) }
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms])
        defer { daemon.stop() }
        #expect(recorder.waitForCalls(1).first?.summary == "New")
    }

    /// A daemon that stops while its reader works takes the reader with it (one stuck at a calendar
    /// would otherwise outlive it until its time limit).
    @Test func theReaderStopsWithTheDaemon() throws {
        defer { bus.stop() }
        let (calendar, alarms) = try files()
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, waitForFile: false, arguments: ["--config", alarms],
                                       environment: ["CHIME_TEST_HANG_READING": calendar])
        #expect(try waitUntil { try center().alarmFileStatus().reading })
        let children = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(daemon.pid)/children", encoding: .utf8)
        let reader = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
        func running() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(reader)/stat", encoding: .utf8) else { return false }
            return !stat.contains(") Z ")
        }
        #expect(running())
        daemon.stop()
        #expect(waitUntil { !running() }, "the reader \(reader) outlived the daemon")
    }

    /// A calendar the reader hangs on is stopped at the reader's time limit, twice, and then left
    /// out (until it changes) while the file's other alarms are scheduled; the daemon lives. (The
    /// limit, 5 s here, only has to outlast the reader's start and the file's few lines: where it
    /// hangs is the test's choice, not a race.)
    @Test func aCalendarThatHangsTheReaderIsStoppedAndLeftOut() throws {
        defer { bus.stop() }
        let (calendar, alarms) = try files()
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms],
                                       environment: ["CHIME_TEST_HANG_READING": calendar, "CHIME_TEST_READER_TIME_LIMIT": "5"])
        defer { daemon.stop() }
        #expect(try center().pendingSummaries().map(\.identifier) == ["own"])
        #expect(daemon.isRunning)
        #expect(daemon.log.contains("the alarm file's reader stopped (ran past its time limit) while reading \(calendar)"), "\(daemon.log)")
        #expect(daemon.log.contains("quarantined: the alarm file's reader stopped twice (ran past its time limit) while reading \(calendar)"))
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("\(calendar): not read: chime's reader stopped twice reading it"), "\(status.stdout)")
    }

    /// A reader that writes what is not its format (here, a program in its place) changes nothing:
    /// the alarms of the last good reading keep running and the status says why.
    @Test func aReaderThatWritesNonsenseChangesNothing() throws {
        defer { bus.stop() }
        let (_, alarms) = try files()
        var daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms])
        #expect(try center().pendingSummaries().map(\.identifier).sorted() == ["ics-shared-1", "own"])
        daemon.stop()
        let nonsense = bus.directory.appendingPathComponent("nonsense").path
        try installExecutable("#!/bin/sh\nprintf 'S\\004\\000\\000\\000fileZZZZZZZZZZ'\n", at: nonsense)
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms],
                                   environment: ["CHIME_TEST_READER_PROGRAM": nonsense])
        defer { daemon.stop() }
        let status = try center().alarmFileStatus()
        #expect(status.problems.count == 1)
        #expect(status.problems.first?.contains("cannot read the file: its reader stopped (wrote unknown frame kind 90)") == true,
                "\(status.problems)")
        #expect(try center().pendingSummaries().map(\.identifier).sorted() == ["ics-shared-1", "own"])
        #expect(daemon.isRunning)
        // One that stops within a frame (its length said, its bytes never come): the same.
        daemon.stop()
        try installExecutable("#!/bin/sh\nprintf 'S\\004\\000\\000\\000fileF\\377\\000\\000\\000{'\n", at: nonsense)
        daemon = try DaemonProcess(bus: bus, stateDirectory: state, arguments: ["--config", alarms],
                                   environment: ["CHIME_TEST_READER_PROGRAM": nonsense])
        let cut = try center().alarmFileStatus()
        #expect(cut.problems.first?.contains("its reader stopped (wrote half a frame and stopped)") == true, "\(cut.problems)")
        #expect(try center().pendingSummaries().map(\.identifier).sorted() == ["ics-shared-1", "own"])
        #expect(daemon.isRunning)
    }

    /// The reader's frames read back as written, however the pipe splits them; a frame of an
    /// unknown kind or past the size bound is refused, not read.
    @Test func framesReadBackAsWrittenHoweverThePipeSplitsThem() throws {
        var records: [ReaderRecord] = []
        for index in 0..<50 {
            records.append(ReaderRecord(identifier: "id-\(index)-ü", enabled: index % 3 != 0, line: index, fromCalendar: index % 2 == 0,
                                        definition: "enabled {\"n\":\(index)}", next: index % 5 == 0 ? nil : Instant(nanosecondsSinceEpoch: Int64(index) << 40),
                                        json: index % 7 == 0 ? "{\"anchored\":\(index)}" : "{\"n\":\(index)}", title: "T\(index)",
                                        label: index % 4 == 0 ? "" : "L", timeZone: index % 6 == 0 ? "Europe/Berlin" : nil,
                                        rule: "every \(index + 1)m", sound: "bell", hasReminders: index % 8 == 0))
        }
        var bytes: [UInt8] = []
        for record in records {
            let payload = FrameWriter.encode(record)
            bytes.append(FrameKind.record.rawValue)
            FrameWriter.append(UInt32(payload.count), to: &bytes)
            bytes += payload
        }
        bytes.append(FrameKind.end.rawValue)
        FrameWriter.append(UInt32(0), to: &bytes)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            var stream = FrameStream()
            var read: [ReaderRecord] = []
            var ended = false
            var offset = 0
            while offset < bytes.count {
                let size = Int.random(in: 1...97, using: &generator)
                stream.append(Array(bytes[offset..<min(bytes.count, offset + size)]))
                offset += size
                frames: while true {
                    switch stream.next() {
                    case .incomplete: break frames
                    case .malformed(let why): Issue.record("malformed: \(why)"); break frames
                    case .frame(.record, let payload): read.append(try #require(FrameReader.record(payload)))
                    case .frame(.end, _): ended = true
                    case .frame: Issue.record("an unexpected frame")
                    }
                }
            }
            #expect(read == records)
            #expect(ended)
        }
        var unknown = FrameStream()
        unknown.append([0x5A, 0, 0, 0, 0])
        guard case .malformed = unknown.next() else { Issue.record("an unknown kind was read"); return }
        var huge = FrameStream()
        huge.append([FrameKind.record.rawValue, 0xFF, 0xFF, 0xFF, 0x7F])
        guard case .malformed = huge.next() else { Issue.record("a 2 GiB frame was waited for"); return }
        // A record cut short is not read.
        let payload = FrameWriter.encode(records[1])
        #expect(FrameReader.record(payload[..<(payload.count - 1)]) == nil)
    }

    /// What the store keeps of a file's alarm reads back as the same digest and origin; a
    /// definition an older chime stored whole reads as its digest.
    @Test func storedDigestsReadBack() {
        let definition = "enabled {\"content\":{\"userInfo\":{\"ics-uid\":\"x\"}}}"
        let digest = DefinitionDigest(definition)
        let known = DefinitionDigest.known(DefinitionDigest.stored(digest, fromCalendar: true))
        #expect(known.digest == digest && known.fromCalendar)
        let old = DefinitionDigest.known(definition)
        #expect(old.digest == digest && old.fromCalendar)
        #expect(!DefinitionDigest.known("enabled {\"content\":{}}").fromCalendar)
        #expect(DefinitionDigest("a") != DefinitionDigest("b"))
    }

    /// The digest is FNV-1a's, 128 bits, as the store has them: the product by its prime written as
    /// a shift and a small product gives what the full product gave, for any text.
    @Test func theDigestIsFNV1aOf128Bits() {
        func reference(_ text: String) -> UInt128 {
            var hash: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
            for byte in text.utf8 { hash = (hash ^ UInt128(byte)) &* 0x0000_0000_0100_0000_0000_0000_0000_013B }
            return hash
        }
        #expect(DefinitionDigest("").value == 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D)
        var generator = SystemRandomNumberGenerator()
        for length in 0..<300 {
            let text = String(decoding: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self)
            #expect(DefinitionDigest(text).value == reference(text), "\(length) bytes")
        }
    }
}
