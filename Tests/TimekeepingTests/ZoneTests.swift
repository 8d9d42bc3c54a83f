import Foundation
import Testing
import TestSupport
@testable import Timekeeping

/// Offsets from our TZif reader checked against Python's zoneinfo, an independent reader of the same database.
@Suite struct ZoneTests {
    static let zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia", "UTC",
                        "America/Santiago", "Europe/Dublin", "Africa/Casablanca", "America/St_Johns"]

    @Test(arguments: zones)
    func offsetsAgreeWithPythonZoneinfo(_ name: String) throws {
        let zone = try Zone.named(name)
        var state: UInt64 = 0x1234_5678 &+ UInt64(name.utf8.count)
        var instants: [Int64] = []
        for _ in 0..<3000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // 1970 to 2100
            instants.append(Int64(state >> 33) % 4_102_444_800)
        }
        let script = """
            import sys, datetime, zoneinfo
            z = zoneinfo.ZoneInfo(sys.argv[1])
            for line in sys.stdin.read().split():
                t = datetime.datetime.fromtimestamp(int(line), z)
                print(int(t.utcoffset().total_seconds()), 1 if t.dst() else 0)
            """
        let directory = try makeTemporaryDirectory("chime-zone")
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in")
        try instants.map(String.init).joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let result = try runProgram("/bin/sh", [Array("-c".utf8), Array("/usr/bin/python3 -c \"$0\" \(name) < \(input.path)".utf8), Array(script.utf8)],
                                    environment: ["PATH": "/usr/bin:/bin"])
        try #require(result.status == 0, "\(result.stderr)")
        let lines = result.stdoutLines
        try #require(lines.count == instants.count)
        var mismatches = 0
        for (instant, line) in zip(instants, lines) {
            let parts = line.split(separator: " ")
            let offset = Int(parts[0])!
            if zone.offset(at: instant) != offset {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(name) at \(instant): ours \(zone.offset(at: instant)), zoneinfo \(offset)") }
            }
        }
        #expect(mismatches == 0)
    }

    @Test func civilArithmetic() {
        #expect(daysFromCivil(1970, 1, 1) == 0)
        #expect(daysFromCivil(2000, 3, 1) == 11017)
        #expect(civilFromDays(11017) == (2000, 3, 1))
        #expect(CivilTime(year: 2026, month: 11, day: 22).weekday == 7)
        for day in stride(from: Int64(-800_000), to: 800_000, by: 997) {
            let (y, m, d) = civilFromDays(day)
            #expect(daysFromCivil(y, m, d) == day)
        }
        #expect(isLeapYear(2000) && !isLeapYear(2100) && isLeapYear(2024))
    }

    @Test func gapsAndOverlapsAreResolved() throws {
        let berlin = try Zone.named("Europe/Berlin")
        // 2026-03-29 02:30 does not exist in Berlin; the gap ends at 03:00 CEST = 01:00 UTC.
        #expect(berlin.resolve(CivilTime(year: 2026, month: 3, day: 29, hour: 2, minute: 30)) == .gap(endsAt: 1_774_746_000))
        // 2026-10-25 02:30 happens twice.
        #expect(berlin.resolve(CivilTime(year: 2026, month: 10, day: 25, hour: 2, minute: 30))
                == .ambiguous(earlier: 1_792_888_200, later: 1_792_891_800))
        #expect(berlin.resolve(CivilTime(year: 2026, month: 7, day: 1, hour: 12)) == .unique(1_782_900_000))
        #expect(throws: ZoneError.self) { try Zone.named("Mars/Olympus_Mons") }
        #expect(throws: ZoneError.self) { try Zone.named("../../etc/passwd") }
    }
}

@Suite struct ZoneCacheTests {
    @Test func aZoneIsReadOnceAndReadAgainWhenItsFileChanges() throws {
        let directory = try makeTemporaryDirectory("chime-zonecache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("zone").path
        try FileManager.default.copyItem(atPath: Zone.databasePath + "/Europe/Berlin", toPath: path)
        let first = try cachedZone(path: path, identifier: "test")
        #expect(try cachedZone(path: path, identifier: "test") == first)
        // Replace the file (as a tzdata upgrade would): the next look-up reads the new one.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: Zone.databasePath + "/Asia/Kathmandu", toPath: path)
        let second = try cachedZone(path: path, identifier: "test")
        #expect(second.offset(at: 1_795_000_000) == 5 * 3600 + 45 * 60)
        #expect(throws: ZoneError.self) { try cachedZone(path: directory.appendingPathComponent("missing").path, identifier: "x") }
    }
}
