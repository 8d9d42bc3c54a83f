@testable import ChimeDaemon
import Foundation
import Logging
import Testing
import TestSupport
import Timekeeping

/// An instant `n` nanoseconds after the epoch.
private func ns(_ n: Int64) -> Instant { Instant(nanosecondsSinceEpoch: n) }

@Suite struct OccurrenceQueueTests {
    @Test func firesInOrderAndHonoursCancelAndReschedule() {
        var queue = OccurrenceQueue()
        queue.schedule("c", at: ns(30))
        queue.schedule("a", at: ns(10))
        queue.schedule("b", at: ns(20))
        queue.schedule("a", at: ns(25))  // rescheduled: the old 10 must not fire
        queue.cancel("b")
        #expect(queue.count == 2)
        #expect(queue.earliest()?.identifier == "a")
        #expect(queue.popDue(ns(24)).isEmpty)
        #expect(queue.popDue(ns(30)).map(\.identifier) == ["a", "c"])
        #expect(queue.count == 0)
        #expect(queue.earliest() == nil)
    }

    @Test func agreesWithASortedListOnRandomOperations() {
        var r = SplitMix(seed: 42)
        var queue = OccurrenceQueue()
        var model: [String: Int64] = [:]
        var now: Int64 = 0
        for _ in 0..<20_000 {
            let id = "r\(r.below(500))"
            switch r.below(4) {
            case 0, 1:
                let t = now + Int64(r.below(1000))
                queue.schedule(id, at: ns(t))
                model[id] = t
            case 2:
                queue.cancel(id)
                model[id] = nil
            default:
                now += Int64(r.below(50))
                let due = queue.popDue(ns(now))
                let expected = model.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
                #expect(due.map(\.identifier) == expected.map(\.key))
                for (key, _) in expected { model[key] = nil }
            }
            #expect(queue.count == model.count)
        }
    }
}

@Suite(.serialized) struct EventSourceTests {
    @Test func theWallClockTimerFiresAtItsTime() throws {
        let timer = try WallClockTimer()
        let now = WallClock.system.now()
        try timer.arm(at: now + .milliseconds(150))
        var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
        let started = Date()
        #expect(poll(&pfd, 1, 30_000) == 1)  // a bound for a failure only
        let waited = Date().timeIntervalSince(started)
        // Never early; on time but for how busy the machine is (a timer that never fired would end the poll).
        #expect(waited > 0.1 && waited < 10)
        #expect(timer.read() == .expired)
        // Disarmed, it stays quiet.
        try timer.arm(at: now + .seconds(1))
        try timer.disarm()
        #expect(poll(&pfd, 1, 1200) == 0)
        // A time in the past fires at once.
        try timer.arm(at: .epoch)
        #expect(poll(&pfd, 1, 30_000) == 1)
    }

    @Test func signalsArriveAsReadableDescriptors() throws {
        let signals = try SignalSource([SIGHUP])
        #expect(signals.read().isEmpty)
        #expect(pthread_kill(pthread_self(), SIGHUP) == 0)
        var pfd = pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pfd, 1, 30_000) == 1)
        #expect(signals.read() == [SIGHUP])
    }
}

@Suite struct PollSetTests {
    @Test func whatWokeTheLoopIsAskedByName() throws {
        var first: [Int32] = [0, 0]
        var second: [Int32] = [0, 0]
        #expect(pipe(&first) == 0 && pipe(&second) == 0)
        defer { for fd in first + second { close(fd) } }
        var sources = PollSet()
        sources.add(.signals, fd: first[0])
        sources.add(.timer, fd: -1)  // none: left out
        sources.add(.part(2, second[0]), fd: second[0])
        #expect(write(second[1], "x", 1) == 1)
        try sources.wait()
        #expect(sources.isReady(.part(2, second[0])))
        #expect(!sources.isReady(.signals))
        #expect(!sources.isReady(.timer))
        #expect(sources.ready == [.part(2, second[0])])
    }
}

/// The child-process part on its own, driven as the loop drives it: poll its descriptors, hand it
/// what is readable, reap (SIGCHLD's work), and give it its deadline.
@Suite(.serialized) struct ChildProcessesTests {
    /// Drives `children` until `done` holds or `seconds` pass.
    func drive(_ children: ChildProcesses, for seconds: Double, until done: () -> Bool) {
        let end = Date().addingTimeInterval(seconds)
        while !done(), Date() < end {
            var fds = children.descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), 20)
            for fd in fds where fd.revents != 0 { children.readable(fd.fd) }
            children.reap()
            if let deadline = children.deadline, deadline <= WallClock.system.now() {
                children.deadlineReached(now: WallClock.system.now())
            }
        }
    }

    @Test func outputIsReadAndWhoStartedItIsToldOnce() throws {
        let children = ChildProcesses(clock: .system, logger: Logger(label: "test"))
        var endings: [(String, Bool)] = []
        try children.start(["sh", "-c", "printf 'show-banners true'"], captureOutput: true, outputLimit: 11, timeLimit: .seconds(30)) { child in
            endings.append((String(decoding: child.collected, as: UTF8.self), child.succeeded))
        }
        drive(children, for: 30) { children.count == 0 }
        #expect(endings.count == 1)
        #expect(endings.first?.0 == "show-banner", "kept to its output limit")
        #expect(endings.first?.1 == true)
    }

    @Test func aChildPastItsTimeLimitIsStoppedAndHandedBack() throws {
        let children = ChildProcesses(clock: .system, logger: Logger(label: "test"))
        var timedOut: [Bool] = []
        let started = Date()
        let pid = try children.start(["sleep", "30"], captureOutput: true, timeLimit: .milliseconds(300)) { timedOut.append($0.timedOut) }
        drive(children, for: 30) { children.count == 0 }
        #expect(timedOut == [true])
        // Stopped at its limit, not when sleep 30 ended.
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(kill(pid, 0) != 0, "stopped and reaped")
    }

    @Test func aProgramThatCannotStartIsAnErrorNotAChild() {
        let children = ChildProcesses(clock: .system, logger: Logger(label: "test"))
        #expect(throws: SpawnError.self) { try children.start(["/nonexistent/gsettings"], timeLimit: .seconds(1)) { _ in } }
        #expect(children.count == 0)
    }
}
