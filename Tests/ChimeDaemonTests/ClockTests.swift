import ChimeCenter
@testable import ChimeDaemon
import DBus
import Foundation
import Logging
import Testing
import TestSupport
import Timekeeping

/// "Now" comes from the daemon's clock, so a test can set it.
@Suite struct ClockTests {
    @Test func theDaemonTakesNowFromItsClock() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = try makeTemporaryDirectory("chime-clock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try bus.connect()
        try SchedulerDaemon.claimBusName(on: connection)
        let store = try Store(directory: directory.path, now: .epoch)
        let newYear2030 = Instant(seconds: 1_893_456_000)
        let daemon = try SchedulerDaemon(connection: connection, store: store, logger: Logger(label: "test"), clock: .fixed(newYear2030))
        let service = try #require(daemon.service)
        // Through the D-Bus door: a timer counts from the clock's now, and a date before it has passed.
        let egg = try service.add(Value.vardict([("title", .string("Eggs")), ("rule", .string("in 5m"))]).dictionaryEntries ?? [])
        #expect(egg.nextFire == newYear2030 + .minutes(5))
        #expect(try store.scheduledTime(of: egg.identifier)?.nextFire == newYear2030 + .minutes(5))
        #expect(throws: DBusError.self) {
            try service.add(Value.vardict([("title", .string("x")), ("rule", .string("2029-12-31 23:59"))]).dictionaryEntries ?? [])
        }
        let wake = try service.add(Value.vardict([("title", .string("x")), ("rule", .string("2030-01-01 07:00")), ("time-zone", .string("UTC"))])
            .dictionaryEntries ?? [])
        #expect(wake.nextFire == newYear2030 + .seconds(7 * 3600))
    }

    /// 2026-11-01 in New York: 01:30 EDT is 05:30 UTC, 01:30 EST (the repeated hour) 06:30 UTC.
    @Test func aRepeating0130AlarmRingsOnceOnAFallBackNightRestartsIncluded() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = try makeTemporaryDirectory("chime-fallback")
        defer { try? FileManager.default.removeItem(at: directory) }
        let firstRing = Instant(seconds: 1_793_511_000)  // 01:30 EDT
        let nextDay = Instant(seconds: 1_793_601_000)  // 2026-11-02 01:30 EST
        let store = try Store(directory: directory.path, now: .epoch)
        var id = ""
        do {
            let connection = try bus.connect()
            try SchedulerDaemon.claimBusName(on: connection)
            let evening = try SchedulerDaemon(connection: connection, store: store, logger: Logger(label: "test"),
                                              clock: .fixed(Instant(seconds: 1_793_505_600)))  // 00:00 EDT
            let added = try #require(evening.service).add(Value.vardict([
                ("title", .string("Night")), ("rule", .string("01:30")), ("time-zone", .string("America/New_York")),
            ]).dictionaryEntries ?? [])
            id = added.identifier
            #expect(added.nextFire == firstRing)
            // It rings at 01:30 EDT and moves on: to the next day, not to 01:30 EST.
            let request = try #require(try store.request(withIdentifier: id))
            var next: Instant?
            try store.write { () throws(StoreError) in next = try evening.advance(request, past: firstRing, now: firstRing + .seconds(1)) }
            #expect(next == nextDay)
            connection.close()
        }
        // Restarted inside the repeated hour (01:10 EST): catching up and re-evaluating (a clock
        // step) both leave it at the next day.
        let connection = try bus.connect()
        try SchedulerDaemon.claimBusName(on: connection)
        let insideTheHour = Instant(seconds: 1_793_513_400)
        let restarted = try SchedulerDaemon(connection: connection, store: store, logger: Logger(label: "test"), clock: .fixed(insideTheHour))
        try restarted.catchUp(now: insideTheHour)
        #expect(try store.scheduledTime(of: id)?.nextFire == nextDay)
        #expect(restarted.queue.time(of: id) == nextDay)
        restarted.rescheduleAll(after: insideTheHour)
        #expect(try store.scheduledTime(of: id)?.nextFire == nextDay)
        #expect(try store.missedOccurrences().isEmpty)
    }
}
