import ChimeCenter
@testable import ChimeDaemon
import DBus
import Foundation
import Logging
import Synchronization
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
        let daemon = try SchedulerDaemon(connection: connection, store: store, logger: Logger(label: "test"), clock: .fixed(newYear2030),
                                         soundServer: false)
        let service = daemon.service
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
                                              clock: .fixed(Instant(seconds: 1_793_505_600)), soundServer: false)  // 00:00 EDT
            let added = try evening.service.add(Value.vardict([
                ("title", .string("Night")), ("rule", .string("01:30")), ("time-zone", .string("America/New_York")),
            ]).dictionaryEntries ?? [])
            id = added.identifier
            #expect(added.nextFire == firstRing)
            // It rings at 01:30 EDT and moves on: to the next day, not to 01:30 EST.
            let request = try #require(try store.request(withIdentifier: id))
            var next: Instant?
            let schedule = Schedule(store: store, marker: try FiringMarker(directory: store.directory), signals: SchedulerSignals(connection: connection),
                                    clock: .fixed(firstRing), logger: Logger(label: "test"))
            try store.write { () throws(StoreError) in next = try schedule.advance(request, past: firstRing, now: firstRing + .seconds(1)) }
            #expect(next == nextDay)
            connection.close()
        }
        // Restarted inside the repeated hour (01:10 EST): catching up and re-evaluating (a clock
        // step) both leave it at the next day. (The schedule alone: the part that does both.)
        let connection = try bus.connect()
        let insideTheHour = Instant(seconds: 1_793_513_400)
        let restarted = Schedule(store: store, marker: try FiringMarker(directory: store.directory), signals: SchedulerSignals(connection: connection),
                                 clock: .fixed(insideTheHour), logger: Logger(label: "test"))
        try restarted.catchUp(now: insideTheHour)
        #expect(try store.scheduledTime(of: id)?.nextFire == nextDay)
        #expect(restarted.queue.time(of: id) == nextDay)
        restarted.rescheduleAll(after: insideTheHour)
        #expect(try store.scheduledTime(of: id)?.nextFire == nextDay)
        #expect(try store.missedOccurrences().isEmpty)
    }
}

/// A change of the system's time zone (timedatectl re-points /etc/localtime) re-plans every alarm at
/// once, through the same path as a clock jump. The test never touches the machine's zone: a test
/// build of the daemon reads a localtime of the test's own (CHIME_TEST_LOCALTIME).
@Suite struct TimeZoneChangeTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws {
        bus = try PrivateBus()
    }

    @Test func aZoneChangeRePlansWallClockAlarmsAndLeavesTimersAlone() throws {
        let zones = bus.directory.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: zones, withIntermediateDirectories: true)
        let localtime = zones.appendingPathComponent("localtime").path
        try FileManager.default.createSymbolicLink(atPath: localtime, withDestinationPath: "/usr/share/zoneinfo/Europe/Berlin")
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state, environment: ["CHIME_TEST_LOCALTIME": localtime, "TZ": ""])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        for arguments in [["at", "16:35", "--id", "homeroom", "Homeroom"], ["in", "3h", "--id", "eggs", "Eggs"]] {
            let added = try runChime(arguments, environment: bus.environment())
            try #require(added.status == 0, "\(added.stderr)")
        }
        func next(_ id: String) throws -> Instant? { try center().pendingSummaries().first { $0.identifier == id }?.nextFire }
        let berlin = try Zone.named("Europe/Berlin"), newYork = try Zone.named("America/New_York")
        let before = try #require(try next("homeroom"))
        #expect(berlin.civil(at: before.seconds).hour == 16 && berlin.civil(at: before.seconds).minute == 35)
        let eggs = try next("eggs")

        // As timedatectl does: a new link renamed over the old one.
        let replacement = zones.appendingPathComponent("localtime.new").path
        try FileManager.default.createSymbolicLink(atPath: replacement, withDestinationPath: "/usr/share/zoneinfo/America/New_York")
        #expect(rename(replacement, localtime) == 0)
        var after = before
        let deadline = Date().addingTimeInterval(30)  // a bound for a failure only
        while Date() < deadline, after == before {
            usleep(50_000)
            after = try #require(try next("homeroom"))
        }
        #expect(after != before, "the alarm was not re-planned after the zone changed")
        #expect(newYork.civil(at: after.seconds).hour == 16 && newYork.civil(at: after.seconds).minute == 35)
        #expect(try next("eggs") == eggs)
        // A touch that changes nothing re-plans nothing (the daemon logs each re-plan).
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: zones.path)
        #expect(try next("homeroom") == after)
    }
}

/// A scheduler daemon in this process, on a private bus, on a clock the test sets: the machine's
/// clock is never touched. Nothing runs its loop; a test calls what the loop would.
final class DaemonOnASetClock {
    let bus: PrivateBus
    let directory: URL
    let store: Store
    let daemon: SchedulerDaemon
    let service: SchedulerService
    private final class Now: Sendable {
        let value: Mutex<Instant>
        init(_ start: Instant) { value = Mutex(start) }
    }
    private let now: Now

    init(at start: Instant) throws {
        bus = try PrivateBus()
        directory = try makeTemporaryDirectory("chime-set-clock")
        let connection = try bus.connect()
        try SchedulerDaemon.claimBusName(on: connection)
        store = try Store(directory: directory.path, now: .epoch)
        let now = Now(start)
        self.now = now
        daemon = try SchedulerDaemon(connection: connection, store: store, logger: Logger(label: "test"),
                                     clock: WallClock { now.value.withLock { $0 } }, soundServer: false)
        service = daemon.service
    }

    /// Sets the daemon's now.
    func set(_ instant: Instant) { now.value.withLock { $0 = instant } }

    /// Adds an alarm through the D-Bus door (the request dictionary `Add` takes).
    @discardableResult
    func add(_ entries: [(String, Value)]) throws -> (identifier: String, nextFire: Instant) {
        try service.add(Value.vardict(entries).dictionaryEntries ?? [])
    }

    func stop() {
        bus.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A jump of the wall clock, as the kernel reports it to the daemon's timer, re-plans every alarm:
/// forward past a day and back before the alarm's time. The machine's clock is never touched: the
/// daemon runs in-process on a clock the test sets, and the test calls what the loop calls when the
/// timer reports the jump.
@Suite struct WallClockJumpTests {
    @Test func aJumpEitherWayRePlansFromTheNewNow() throws {
        let newYear2030 = Instant(seconds: 1_893_456_000)  // 2030-01-01 00:00 UTC
        let test = try DaemonOnASetClock(at: newYear2030)
        defer { test.stop() }
        let (store, daemon) = (test.store, test.daemon)
        let entries: [(String, Value)] = [("title", .string("Homeroom")), ("rule", .string("16:35")), ("time-zone", .string("UTC"))]
        let alarm = try test.add(entries)
        let at1635: TimeSpan = .seconds(16 * 3600 + 35 * 60)
        #expect(alarm.nextFire == newYear2030 + at1635)

        // Back to the last day of 2029, 10:00: the next 16:35 is that afternoon, not the planned one.
        test.set(newYear2030 - .seconds(14 * 3600))
        daemon.wallClockJumped()
        let dayBefore: TimeSpan = .seconds(86_400)
        #expect(try store.scheduledTime(of: alarm.identifier)?.nextFire == newYear2030 - dayBefore + at1635)
        // Forward to 3 January, 10:00: the three 16:35s passed in the jump are recorded missed (past their
        // hour of grace), not rung, and the next is that day's.
        test.set(newYear2030 + .seconds(2 * 86_400 + 10 * 3600))
        daemon.wallClockJumped()
        let twoDaysOn: TimeSpan = .seconds(2 * 86_400)
        #expect(try store.scheduledTime(of: alarm.identifier)?.nextFire == newYear2030 + twoDaysOn + at1635)
        #expect(try store.missedOccurrences().map(\.due) == [newYear2030 - dayBefore + at1635, newYear2030 + at1635,
                                                             newYear2030 + dayBefore + at1635])
        // An occurrence already dealt with is not rung again after a jump back.
        test.set(newYear2030 + .seconds(86_400 + 12 * 3600))
        daemon.wallClockJumped()
        #expect(try store.scheduledTime(of: alarm.identifier)?.nextFire == newYear2030 + twoDaysOn + at1635)
    }
}

/// After a sleep, which the kernel reports to the daemon's timer as a change of the wall clock:
/// what fell due while the machine slept is not skipped. Each alarm rings once for its latest
/// occurrence, marked late; a repeating alarm's older occurrences are recorded missed; one past its
/// grace is recorded missed and not shown. (No notification server here: the rings are held for one,
/// which is where they would wait for it.)
@Suite struct ResumeCatchUpTests {
    @Test func whatFellDueDuringSleepRingsOnceLateAndTheRestIsRecordedMissed() throws {
        let midnight = Instant(seconds: 1_893_456_000)  // 2030-01-01 00:00 UTC
        let test = try DaemonOnASetClock(at: midnight)
        defer { test.stop() }
        let (store, daemon) = (test.store, test.daemon)
        func add(_ id: String, _ rule: String, grace: UInt32? = nil) throws {
            var entries: [(String, Value)] = [("id", .string(id)), ("title", .string(id)), ("rule", .string(rule)), ("time-zone", .string("UTC"))]
            if let grace { entries.append(("grace", .uint32(grace))) }
            try test.add(entries)
        }
        try add("wake", "07:00")
        try add("half-hourly", "*:0/30")
        try add("strict", "06:00", grace: 60)
        try add("later", "12:00")

        // The machine sleeps from just after midnight to 07:40 and wakes: the timer reports a clock change.
        test.set(midnight + .seconds(7 * 3600 + 40 * 60))
        daemon.wallClockJumped()

        let at = { (h: Int64, m: Int64) in midnight + .seconds(h * 3600 + m * 60) }
        // One ring each, for the latest occurrence, waiting for a server.
        #expect(Set(try store.held().map { "\($0.identifier)@\($0.due.seconds)" })
                == ["wake@\(at(7, 0).seconds)", "half-hourly@\(at(7, 30).seconds)"])
        // The half-hourly alarm's 14 older occurrences (00:30 ... 07:00) and the 06:00 one past its
        // minute of grace are on the record.
        let missed = try store.missedOccurrences()
        let halfHours: [Instant] = (1...14).map { (n: Int) -> Instant in at(Int64(n) / 2, Int64(n) % 2 * 30) }
        #expect(missed.filter { $0.identifier == "half-hourly" }.map(\.due) == halfHours)
        #expect(missed.filter { $0.identifier == "strict" }.map(\.due) == [at(6, 0)])
        // Each is planned on from now; the noon alarm was never due and is untouched.
        #expect(try store.scheduledTime(of: "wake")?.nextFire == at(7, 0) + .seconds(86_400))
        let halfHourly = try store.scheduledTime(of: "half-hourly")
        #expect(halfHourly?.nextFire == at(8, 0), "\(String(describing: halfHourly))")
        #expect(try store.scheduledTime(of: "strict")?.nextFire == at(6, 0) + .seconds(86_400))
        #expect(try store.scheduledTime(of: "later")?.nextFire == at(12, 0))
    }
}

/// A reminder says when, and for a repeating alarm its rule in words, in the user's language.
@Suite struct ReminderLineTests {
    @Test func aRepeatingAlarmsReminderSaysItsRuleInWords() throws {
        let occurrence = Instant(seconds: 1_795_448_100)  // Mon 2026-11-23 16:35 in Berlin (a fixed reference: no daemon, no clock)
        let weekdays = try Trigger(parsing: "16:35 mon-fri", timeZone: "Europe/Berlin", anchor: .epoch)
        #expect(Presenter.reminderLine(weekdays, occurrence: occurrence, lead: .seconds(900), language: .english)
                == "Reminder: in 15m · at 16:35 · every weekday at 16:35")
        #expect(Presenter.reminderLine(weekdays, occurrence: occurrence, lead: .seconds(900), language: .german)
                == "Reminder: in 15m · at 16:35 · werktags um 16:35")
        // A one-off says only when.
        let once = Trigger(rule: .instant(occurrence), repeats: false, timeZone: "Europe/Berlin", anchor: .epoch)
        #expect(Presenter.reminderLine(once, occurrence: occurrence, lead: .seconds(900), language: .english)
                == "Reminder: in 15m · at 16:35")
    }
}
