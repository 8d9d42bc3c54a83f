// Plays a history against the simulated daemon and checks it against the model after every step.
import ChimeDaemon
import DBus
import Foundation
import Timekeeping

/// An occurrence held for a server or waiting to be tried again.
struct Detached: Hashable {
    var identifier: String
    var due: Int64
}

/// Why a history failed: at which step, and what broke.
struct Failure: Error, CustomStringConvertible {
    var step: Int
    var message: String
    var description: String { "step \(step + 1): \(message)" }
}

final class Runner {
    let start: Int64
    let steps: [Step]
    let trace: Bool
    let world: SimulatedWorld
    var daemon: SimulatedDaemon
    var model: Model
    /// Which alarm each popup on screen was shown for (learnt from the Fired signals).
    var popupOf: [UInt32: String] = [:]
    /// Occurrences handled: shown (Fired), or recorded missed.
    var fired: [String: [Int64: Int]] = [:]
    var heardCount = 0
    /// A planned crash's downtime.
    var downAfterCrash: Int64?
    var index = 0
    /// How far ahead the model is asked for an alarm's next time (the longest gap a history makes
    /// between two occurrences is time away, four days, and holidays).
    static let horizon: Int64 = 16 * 86_400
    static let nearHorizon: Int64 = 4 * 86_400
    var restarts = 0
    /// A zone the daemon died before re-planning for: the model's from the restart.
    var zoneAtRestart: String?
    /// The machine's sleeps (from its start to its resume), and which alarms rang for what came due
    /// in each.
    var sleeps: [(from: Int64, to: Int64)] = []
    var rangAfterSleep: [Int: [String: Int]] = [:]
    /// Wall times the daemon could not know were passed (a zone changed, or the clock set back, while it
    /// was down or before its re-plan reached the store: see `restartIfDead` and `.jump`).
    var uncertain: [(from: Int64, to: Int64)] = []
    func isUncertain(_ at: Int64) -> Bool { uncertain.contains { $0.from <= at && at <= $0.to } }

    init(start: Int64, zone: String, steps: [Step], storeName: String, trace: Bool) throws {
        self.start = start
        self.steps = steps
        self.trace = trace
        world = try SimulatedWorld(start: Instant(seconds: start), zone: zone, storeName: storeName)
        model = Model(start: start, zone: zone)
        daemon = try SimulatedDaemon(world: world)
    }

    var now: Int64 { world.now.seconds }

    func fail(_ message: String) -> Failure { Failure(step: index, message: message) }

    /// Plays every step, then lets the world settle (a server that answers, two hours) and checks
    /// that nothing was lost.
    func play() throws(Failure) {
        for (i, step) in steps.enumerated() {
            index = i
            if trace { print("[\(stamp(now))] \(step.line)") }
            try perform(step)
            try listen()
            if trace, !daemon.dead {
                for alarm in model.alarms.values.sorted(by: { $0.name < $1.name }) { print("      \(alarm.name): \(daemon.stored(alarm.identifier))") }
            }
            try check(after: step)
        }
        index = steps.count
        if trace { print("[\(stamp(now))] settle: a server that answers, two hours") }
        try restartIfDead()
        daemon.serverComes()
        world.serverMood = .answering
        world.moodUntil = nil
        // Two hours of a daemon that runs them whole (one killed meanwhile starts again: again).
        var before: Int
        repeat {
            before = restarts
            try wait(2 * 3600)
        } while restarts != before
        try listen()
        try check(after: nil)
        try checkNothingLost(upTo: now - 2 * 3600)
    }

    func stamp(_ t: Int64) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd HH:mm:ss zzz"
        f.timeZone = TimeZone(identifier: model.zone)
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(t)))
    }

    // MARK: Steps

    /// The last step took a popup down (close, expire).
    var tookDown = false

    func perform(_ step: Step) throws(Failure) {
        tookDown = false
        try restartIfDead()
        model.follow(now)
        // The person's calls are answered: a planned death waits for the daemon's own work (or an answer to a popup).
        switch step {
        case .add, .skip, .remove, .away, .holiday: daemon.countingPaused = true
        default: break
        }
        defer { daemon.countingPaused = false }
        switch step {
        case .add(let name, let kind, let ring, let holidays):
            guard model.alarms[name] == nil else { return }
            var entries: [(String, Value)] = [("title", .string(name))]
            switch kind {
            case .daily(let h, let m): entries.append(("rule", .string("\(two(h)):\(two(m))")))
            case .weekdays(let h, let m): entries.append(("rule", .string("\(two(h)):\(two(m)) mon-fri")))
            case .timer(let minutes): entries.append(("rule", .string("in \(minutes)m")))
            }
            if ring { entries += [("sound", .string("alarm-clock-elapsed")), ("ring", .int64(120))] }
            if holidays { entries.append(("on-holiday", .string("skip"))) }
            let alarm = ModelAlarm(name: name, kind: kind, ring: ring, skipHolidays: holidays, added: now)
            alarm.firstStretch = model.swept.count
            do {
                alarm.identifier = try daemon.add(entries).identifier
            } catch {
                if daemon.dead { return }  // killed while adding: the call got no answer
                // Refused rightly when it would never ring (a timer that ends in time away).
                if model.expected(alarm, to: now + Self.horizon).isEmpty { return }
                throw fail("add \(name) was refused: \(error)")
            }
            model.alarms[name] = alarm
        case .wait(let seconds):
            try wait(seconds)
        case .press(let name, let key):
            guard let popup = popup(of: name) else { return }
            let pressed = now
            if trace { print("   popup \(popup) of \(name); the ledger: \(daemon.delivered()); on screen: \(world.popups)") }
            daemon.press(popup, key)
            popupOf[popup] = nil
            guard key == "snooze", let alarm = model.alarms[name] else { return }
            if daemon.dead {
                // Killed while answering: the snooze took if the store kept it.
                try restartIfDead()
                guard case .some(.some(let next)) = daemon.pending()[alarm.identifier], next.seconds == pressed + 600 else { return }
            }
            model.follow(now)
            // One still to ring is replaced (two popups of the alarm up, an older one's snoozed first).
            for i in alarm.snoozes.indices where alarm.snoozes[i].until > pressed && fired[name]?[alarm.snoozes[i].until] == nil {
                alarm.snoozes[i].replaced = true
            }
            alarm.snoozes.append((pressed, pressed + 600, model.swept.count, index, false))
        case .close(let name):
            guard let popup = popup(of: name) else { return }
            daemon.closePopup(popup)
            popupOf[popup] = nil
            tookDown = true
        case .expire(let name):
            guard let popup = popup(of: name) else { return }
            daemon.closePopup(popup, expired: true)
            popupOf[popup] = nil
            tookDown = true
        case .elsewhere(let name):
            guard let alarm = model.alarms[name] else { return }
            daemon.answeredElsewhere(alarm.identifier, acknowledged: world.now)
        case .skip(let name):
            guard let alarm = model.alarms[name], alarm.removed == nil else { return }
            // The next of the rule's occurrences (a snooze is not skipped: it is answered).
            let snoozes = Set(alarm.snoozes.map { $0.until })
            // (Not one that came due and waits for a server, after the clock was set back.)
            let waiting = Set(daemon.detached().filter { $0.identifier == alarm.identifier }.map(\.due.seconds))
            guard let next = model.expected(alarm, to: now + Self.horizon).first(where: {
                $0 > now && !snoozes.contains($0) && fired[alarm.name]?[$0] == nil && !waiting.contains($0)
            }) else { return }
            if daemon.skip(alarm.identifier, occurrence: Instant(seconds: next)), !daemon.dead { alarm.skipped.insert(next) }
        case .remove(let name):
            guard let alarm = model.alarms[name], alarm.removed == nil else { return }
            if daemon.remove(alarm.identifier), !daemon.dead {
                alarm.removed = now
                alarm.removedStep = index
            }
        case .away(let start, let length):
            let from = now + start, until = now + start + length
            guard daemon.setAway(from: Instant(seconds: from), until: Instant(seconds: until)), !daemon.dead else { return }
            model.follow(now)
            // (The daemon lets go of a stretch that ended over a day before another is set.)
            for i in model.away.indices where model.away[i].until <= now - 86_400 && model.away[i].dropped == nil { model.away[i].dropped = model.swept.count }
            model.away.append((from, until, model.swept.count, nil))
        case .holiday(let days):
            let day = Model.dayNumber(now, model.zone) + Int64(days)
            if model.holidays[day] == nil { model.holidays[day] = model.swept.count }
            var named: [Int64: String] = [:]
            for day in model.holidays.keys { named[day] = "holiday" }
            daemon.setHolidays(named)
        case .serverLeaves:
            daemon.serverLeaves()
            popupOf.removeAll()
        case .serverComes:
            daemon.serverComes()
        case .mood(let mood):
            world.serverMood = ServerMood(rawValue: mood) ?? .answering
            // A server that refuses or hangs does so for three hours, then is itself again.
            world.moodUntil = world.serverMood == .answering ? nil : world.now + .seconds(3 * 3600)
        case .sleep(let seconds):
            let asleep = now
            daemon.sleepStarting()
            world.jump(by: .seconds(seconds))
            try restartIfDead()
            daemon.resuming()
            daemon.resumed()
            sleeps.append((asleep, now))
        case .crash(let down):
            daemon.die()
            downAfterCrash = down
            try restartIfDead()
        case .crashAtCommit(let commits, let down):
            daemon.dieBeforeCommit(commits)
            downAfterCrash = down
        case .zone(let zone):
            world.setZone(zone)
            model.follow(now)
            daemon.clockChanged()
            // Killed before it re-planned, the daemon learns of the zone when it starts again.
            if daemon.dead { zoneAtRestart = zone } else { model.zone = zone }
        case .jump(let seconds):
            // (Set back, the clock passes a sleep's times again, awake.)
            if seconds < 0 { sleeps.removeAll { $0.to > now + seconds } }
            world.jump(by: .seconds(seconds))
            daemon.clockChanged()
            // Killed before its re-plan reached the store, the daemon starts again not knowing the
            // clock was set back: what comes due again in the wall time passed twice may be shown,
            // recorded missed, or neither (as for a zone changed while it was down).
            if seconds < 0, daemon.dead { uncertain.append((now, now - seconds)) }
        }
    }

    /// The newest popup on screen shown for `name`.
    func popup(of name: String) -> UInt32? {
        popupOf.filter { $0.value == name && world.popups[$0.key] != nil }.keys.max()
    }

    /// Runs the daemon for `seconds`; a daemon killed meanwhile is started again after its downtime.
    func wait(_ seconds: Int64) throws(Failure) {
        let end = now + seconds
        while true {
            guard daemon.run(until: Instant(seconds: end)) else { throw fail("the daemon did not settle (a deadline kept coming due)") }
            try listen()
            if daemon.dead {
                try restartIfDead()
                continue
            }
            if now >= end { return }
        }
    }

    func restartIfDead() throws(Failure) {
        guard daemon.dead else { return }
        let down = downAfterCrash ?? 0
        downAfterCrash = nil
        let diedAt = now
        if trace { print("[\(stamp(now))]   killed; started again \(down) s later") }
        world.jump(by: .seconds(down))
        restarts += 1
        model.follow(now)
        if let zone = zoneAtRestart {
            // When in the downtime the zone changed, the daemon cannot know: what came due then
            // in either zone may be shown, recorded missed, or neither.
            uncertain.append((diedAt, now))
            model.zone = zone
        }
        zoneAtRestart = nil
        popupOf = popupOf.filter { world.popups[$0.key] != nil }
        daemon.buried()
        do {
            daemon = try SimulatedDaemon(world: world)
        } catch {
            throw fail("the daemon could not start again: \(error)")
        }
        try listen()
    }

    // MARK: Checks

    /// Takes in what the daemon said since the last look.
    func listen() throws(Failure) {
        model.follow(now)
        let heard = world.heard
        while heardCount < heard.count {
            let (at, signal, shownIn) = heard[heardCount]
            heardCount += 1
            if trace { print("[\(stamp(at.seconds))]   \(signal)") }
            switch signal {
            case .fired(let id, let due, let timeliness):
                guard let alarm = model.alarms.values.first(where: { $0.identifier == id }) else { throw fail("fired an alarm nobody set: \(id)") }
                fired[alarm.name, default: [:]][due.seconds, default: 0] += 1
                if fired[alarm.name]![due.seconds]! > 1 { throw fail("\(alarm.name)'s occurrence at \(stamp(due.seconds)) was shown twice") }
                // What came due during a sleep rings once an alarm, at the resume: the latest, said
                // late, the older ones recorded missed (however the timer and logind's word are ordered).
                if let sleep = sleeps.firstIndex(where: { $0.from + 1 < due.seconds && due.seconds + 1 < $0.to }) {
                    if case .onTime = timeliness {
                        throw fail("\(alarm.name)'s occurrence at \(stamp(due.seconds)) came due during a sleep and rang at the resume as on time")
                    }
                    rangAfterSleep[sleep, default: [:]][alarm.name, default: 0] += 1
                    if rangAfterSleep[sleep]![alarm.name]! > 1 { throw fail("\(alarm.name) rang twice for what came due in one sleep") }
                }
                let expected = model.expected(alarm, to: max(now, due.seconds))
                if !expected.contains(due.seconds), !isUncertain(due.seconds) {
                    throw fail("\(alarm.name) fired for \(stamp(due.seconds)), which the person did not ask for (expected: \(expected.suffix(3).map(stamp)))")
                }
                if let popup = shownIn, world.popups[popup] == alarm.name { popupOf[popup] = alarm.name }
            case .missed(let id, let due):
                guard let alarm = model.alarms.values.first(where: { $0.identifier == id }) else { continue }
                fired[alarm.name, default: [:]][due.seconds, default: 0] += 1
                if fired[alarm.name]![due.seconds]! > 1 { throw fail("\(alarm.name)'s occurrence at \(stamp(due.seconds)) was shown and missed") }
            default:
                break
            }
        }
    }

    /// After each step: what was answered does not ring, and `chime list` says what the model says.
    func check(after step: Step?) throws(Failure) {
        guard !daemon.dead else { return }
        let ringing = Set(daemon.ringingNow)
        switch step {
        case .press(let name, _)?, .close(let name)?, .expire(let name)?, .elsewhere(let name)?, .remove(let name)?:
            if let alarm = model.alarms[name], ringing.contains(alarm.identifier) {
                // A popup taken down rings no more (its alarm rings on only for a newer popup).
                // (After the server left, an alarm rings on without a popup until it is answered or runs out.)
                if case .expire = step!, tookDown, popup(of: name) == nil { throw fail("\(name) still rings after its popup expired") }
                if case .close = step!, tookDown, popup(of: name) == nil { throw fail("\(name) still rings after its popup was closed") }
                // Pressed on a popup it no longer shows (its new occurrence rings), the answer is for the old one.
                // Answered elsewhere up to now: what came due by then (after the clock was set back,
                // the one ringing may be due after this machine's now).
                if case .elsewhere = step!, let due = daemon.ringingDue[alarm.identifier], due.seconds <= now {
                    throw fail("\(name) still rings after it was answered on another machine")
                }
                if popup(of: name) == nil, case .remove = step! { throw fail("\(name) still rings after it was removed") }
            }
        default:
            break
        }
        for alarm in model.alarms.values {
            guard let removed = alarm.removedStep, !alarm.snoozes.contains(where: { $0.step > removed }) else { continue }
            if ringing.contains(alarm.identifier) { throw fail("\(alarm.name) rings after it was removed") }
        }
        // What `chime list` says: each alarm's next time is its first occurrence not yet handled.
        let (pending, quarantined) = daemon.listing()
        let detached = Set(daemon.detached().map { Detached(identifier: $0.identifier, due: $0.due.seconds) })
        let missedRows = daemon.missed()
        for (identifier, due) in missedRows {
            if let alarm = model.alarms.values.first(where: { $0.identifier == identifier }) {
                if fired[alarm.name]?[due.seconds] == nil { fired[alarm.name, default: [:]][due.seconds] = 1 }
            }
        }
        for alarm in model.alarms.values.sorted(by: { $0.name < $1.name }) where alarm.removed == nil {
            // Two deaths while working on one alarm leave it out, as two crashes on it would (the
            // daemon cannot tell a kill from a crash); said in `chime status`, and not otherwise.
            if quarantined.contains(alarm.identifier) {
                if restarts < 2 { throw fail("\(alarm.name) was left out (quarantined) after \(restarts) stop(s)") }
                continue
            }
            let handled = fired[alarm.name] ?? [:]
            func firstUnhandled(to: Int64) -> Int64? {
                model.expected(alarm, to: to).first {
                    handled[$0] == nil && !detached.contains(Detached(identifier: alarm.identifier, due: $0))
                        && !daemon.inFlight(alarm.identifier, due: Instant(seconds: $0)) && !isUncertain($0)
                }
            }
            // (Four days ahead finds the next of most; the whole horizon only when it does not.)
            let want = firstUnhandled(to: now + Self.nearHorizon) ?? firstUnhandled(to: now + Self.horizon)
            let said = pending[alarm.identifier] ?? nil
            if let said, daemon.inFlight(alarm.identifier, due: said) || isUncertain(said.seconds) { continue }
            if said?.seconds != want {
                throw fail("chime list says \(alarm.name) is next at \(said.map { stamp($0.seconds) } ?? "never"); the person expects \(want.map(stamp) ?? "never") (the store: \(daemon.stored(alarm.identifier)))")
            }
        }
    }

    /// At the end: every occurrence that came due was shown or recorded missed.
    /// (An alarm removed takes with it what was held or retried for it: the person cancelled it.)
    func checkNothingLost(upTo end: Int64) throws(Failure) {
        let quarantined = daemon.quarantined()
        for alarm in model.alarms.values.sorted(by: { $0.name < $1.name }) where alarm.removed == nil && !quarantined.contains(alarm.identifier) {
            let handled = fired[alarm.name] ?? [:]
            for at in model.expected(alarm, to: end) where handled[at] == nil && !isUncertain(at) {
                throw fail("\(alarm.name)'s occurrence at \(stamp(at)) was neither shown nor recorded missed")
            }
        }
    }
}
