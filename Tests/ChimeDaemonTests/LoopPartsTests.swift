import ChimeDaemon
import Foundation
import Testing
import TestSupport

@Suite struct OccurrenceQueueTests {
    @Test func firesInOrderAndHonoursCancelAndReschedule() {
        var queue = OccurrenceQueue()
        queue.schedule("c", at: 30)
        queue.schedule("a", at: 10)
        queue.schedule("b", at: 20)
        queue.schedule("a", at: 25)  // rescheduled: the old 10 must not fire
        queue.cancel("b")
        #expect(queue.count == 2)
        #expect(queue.earliest()?.identifier == "a")
        #expect(queue.popDue(24).isEmpty)
        #expect(queue.popDue(30).map(\.identifier) == ["a", "c"])
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
                queue.schedule(id, at: t)
                model[id] = t
            case 2:
                queue.cancel(id)
                model[id] = nil
            default:
                now += Int64(r.below(50))
                let due = queue.popDue(now)
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
        let now = wallClockNow()
        let target = (now.seconds, now.nanoseconds + 150_000_000)
        timer.arm(at: target.0 + Int64(target.1 / 1_000_000_000), nanoseconds: target.1 % 1_000_000_000)
        var pfd = pollfd(fd: timer.fd, events: Int16(POLLIN), revents: 0)
        let started = Date()
        #expect(poll(&pfd, 1, 2000) == 1)
        let waited = Date().timeIntervalSince(started)
        #expect(waited > 0.1 && waited < 1.0)
        #expect(timer.read() == .expired)
        // Disarmed, it stays quiet.
        timer.arm(at: now.seconds + 1)
        timer.disarm()
        #expect(poll(&pfd, 1, 1200) == 0)
        // A time in the past fires at once.
        timer.arm(at: 0)
        #expect(poll(&pfd, 1, 500) == 1)
    }

    @Test func signalsArriveAsReadableDescriptors() throws {
        let signals = try SignalSource([SIGHUP])
        #expect(signals.read().isEmpty)
        #expect(pthread_kill(pthread_self(), SIGHUP) == 0)
        var pfd = pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pfd, 1, 1000) == 1)
        #expect(signals.read() == [SIGHUP])
    }
}
