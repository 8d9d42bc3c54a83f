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
}
