// The schedule's alarms switched off and on, skipped, and timers paused and resumed (Schedule.swift).
import ChimeCenter
import DBus
import FoundationEssentials
import Logging
import Posix
import Timekeeping

extension Schedule {
    // MARK: - On and off

    /// Switches alarms off: kept and listed, never fired (what waited to be shown of them goes, and
    /// a ring stops). The alarm file's are switched off in the file (`enabled = false`).
    func disable(_ identifiers: [String]) throws(SchedulerError) -> [String] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refuseQuarantined(identifiers)
        try refusePaused(identifiers)
        do {
            try store.write { () throws(StoreError) in
                for id in identifiers { try store.setDisabled(id, true) }
            }
        } catch {
            throw .store(error)
        }
        takenOff(identifiers, gone: false)
        return identifiers
    }

    /// Switches alarms back on, each planned from now; one with no occurrence left (a one-off whose
    /// time passed while it was off) stays off, and the call is refused as never firing.
    func enable(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refuseQuarantined(identifiers)
        try refusePaused(identifiers)
        let now = clock.now()
        var planned: [(identifier: String, next: Instant)] = []
        for id in identifiers {
            guard let request = load(id) else { throw .unknown([id]) }  // quarantined meanwhile
            guard let next = nextFire(request, after: now) else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) has no occurrence left to switch on for; it stays off",
                                            kind: .neverFires))
            }
            planned.append((id, next))
        }
        do {
            try store.write { () throws(StoreError) in
                for (id, next) in planned {
                    try store.setDisabled(id, false)
                    try store.setNextFire(id, next)
                }
            }
        } catch {
            throw .store(error)
        }
        for (id, next) in planned { requeue(id, next) }
        return planned
    }

    /// Skips an alarm's next occurrence (`undo`: brings back the one skipped last that is still
    /// ahead). Answers the occurrence skipped or brought back, and the alarm's next one after.
    /// Skipping the last occurrence an alarm has is refused: that is cancelling it.
    func skip(_ identifier: String, undo: Bool) throws(SchedulerError) -> (changed: Instant, next: Instant?) {
        try refuseUnknown([identifier])
        try refuseQuarantined([identifier])
        try refusePaused([identifier])
        if (try? store.scheduledTime(of: identifier))??.disabled == true {
            throw .invalid(RequestError(.id, "\(quotedForMessage(identifier)) is switched off; chime enable \(identifier) first"))
        }
        guard var request = load(identifier) else { throw .unknown([identifier]) }
        let now = clock.now()
        keepSkipsThatCanMatter(&request, now: now)
        let changed: Instant
        if undo {
            guard let last = request.trigger.skipped.lastIndex(where: { $0 > now }) else {
                throw .invalid(RequestError(.skipped, "\(quotedForMessage(identifier)) has no skipped occurrence ahead to bring back"))
            }
            changed = request.trigger.skipped.remove(at: last)
        } else {
            guard let next = nextFire(request, after: now) else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(identifier)) has no occurrence ahead to skip", kind: .neverFires))
            }
            try makeRoomForSkip(&request, now: now)
            request.trigger.skipped.append(next)
            changed = next
        }
        return (changed, try storeSkips(request, now: now))
    }

    /// Skips one occurrence (the notice's Skip this one), or brings it back (`undo`): the alarm's
    /// next occurrence after.
    @discardableResult
    func skip(_ identifier: String, occurrence: Instant, undo: Bool) throws(SchedulerError) -> Instant? {
        try refuseUnknown([identifier])
        try refuseQuarantined([identifier])
        guard var request = load(identifier) else { throw .unknown([identifier]) }
        let now = clock.now()
        keepSkipsThatCanMatter(&request, now: now)
        if undo {
            guard let index = request.trigger.skipped.lastIndex(of: occurrence), occurrence > now else {
                throw .invalid(RequestError(.skipped, "that occurrence of \(quotedForMessage(identifier)) is not skipped"))
            }
            request.trigger.skipped.remove(at: index)
        } else {
            guard occurrence > now else { throw .invalid(RequestError(.skipped, "that occurrence of \(quotedForMessage(identifier)) has passed")) }
            guard !request.trigger.skipped.contains(occurrence) else { return nextFire(request, after: now) }
            try makeRoomForSkip(&request, now: now)
            request.trigger.skipped.append(occurrence)
        }
        return try storeSkips(request, now: now)
    }

    /// Keeps the skips that can still matter: those ahead, and those passed since the alarm last
    /// rang (a clock set back passes them again, and they stay skipped). One at or before the last
    /// occurrence it rang cannot: the daemon never rings at or before that again.
    private func keepSkipsThatCanMatter(_ request: inout NotificationRequest, now: Instant) {
        let lastFired = (try? store.scheduledTime(of: request.identifier))??.lastFired
        guard let lastFired else { return }
        request.trigger.skipped.removeAll { $0 <= now && $0 <= lastFired }
    }

    /// Room for one more skip: passed ones go first, oldest first; the ones ahead are a bound of
    /// their own.
    private func makeRoomForSkip(_ request: inout NotificationRequest, now: Instant) throws(SchedulerError) {
        let ahead = request.trigger.skipped.filter { $0 > now }.count
        guard ahead < RequestBounds.skippedCount.upperBound else {
            throw .invalid(RequestError(.skipped, "\(quotedForMessage(request.identifier)) has \(ahead) skipped occurrences ahead already"))
        }
        while request.trigger.skipped.count >= RequestBounds.skippedCount.upperBound,
              let oldest = request.trigger.skipped.indices.filter({ request.trigger.skipped[$0] <= now }).min(by: { request.trigger.skipped[$0] < request.trigger.skipped[$1] }) {
            request.trigger.skipped.remove(at: oldest)
        }
    }

    /// Stores a request whose skips changed, and plans it from `now`.
    private func storeSkips(_ request: NotificationRequest, now: Instant) throws(SchedulerError) -> Instant? {
        let identifier = request.identifier
        // Never again one it rang (after the clock was set back), as a re-plan.
        let lastFired = (try? store.scheduledTime(of: identifier))??.lastFired
        let planned = nextFire(request, after: max(now, lastFired ?? now))
        if planned == nil {
            throw .invalid(RequestError(.rule, "that is the last occurrence \(quotedForMessage(identifier)) has; chime cancel \(identifier) removes it",
                                        kind: .neverFires))
        }
        // A snooze still to ring stays the next fire: a skip is of the rule's occurrences.
        var next = planned
        if let stored = try? store.scheduledTime(of: identifier)?.nextFire, stored > now, (try? store.snoozes())?[identifier] == stored {
            next = stored
        }
        do {
            try store.write { () throws(StoreError) in
                try events.keepInFlight(identifier)
                try store.update(request, nextFire: next)
            }
        } catch {
            throw .store(error)
        }
        requeue(identifier, next)
        return next
    }

    /// A paused timer is resumed (or cancelled), not switched off or on.
    private func refusePaused(_ identifiers: [String]) throws(SchedulerError) {
        for id in identifiers where (try? store.scheduledTime(of: id))??.paused == true {
            throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is a paused timer: resume it (chime resume \(id)) or cancel it"))
        }
    }

    // MARK: - Pausing timers

    /// Pauses timers: each keeps the time it had left (in the store, across restarts) and is not
    /// planned until resumed. Only a timer (a rule that counts elapsed time) can be paused, and only
    /// while its next time is ahead.
    func pause(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, remaining: TimeSpan)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refuseQuarantined(identifiers)
        let now = clock.now()
        var paused: [(identifier: String, remaining: TimeSpan)] = []
        for id in identifiers {
            guard let request = load(id) else { throw .unknown([id]) }
            guard case .interval = request.trigger.rule else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is not a timer; an alarm at a clock time is switched off instead (chime disable \(id))"))
            }
            let time: ScheduledTime?
            do { time = try store.scheduledTime(of: id) } catch { throw .store(error) }
            guard let time, !time.paused, !time.disabled, let next = time.nextFire else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) has no time ahead to pause (it is paused, off, or waiting to be shown)"))
            }
            paused.append((id, max(next - now, .zero)))
        }
        do {
            try store.write { () throws(StoreError) in
                for (id, remaining) in paused { try store.setPaused(id, remaining: remaining) }
            }
        } catch {
            throw .store(error)
        }
        takenOff(paused.map(\.identifier), gone: false)
        return paused
    }

    /// Resumes paused timers: each fires once the time it had left has passed again from now (a
    /// repeating one then keeps its interval from there).
    func resume(_ identifiers: [String]) throws(SchedulerError) -> [(identifier: String, next: Instant)] {
        try refuseFileAlarms(identifiers)
        try refuseUnknown(identifiers)
        try refuseQuarantined(identifiers)
        let now = clock.now()
        let left: [String: TimeSpan]
        do { left = Dictionary(try store.pausedTimers().map { ($0.identifier, $0.remaining) }, uniquingKeysWith: { a, _ in a }) } catch {
            throw .store(error)
        }
        var resumed: [(request: NotificationRequest, next: Instant)] = []
        for id in identifiers {
            guard let remaining = left[id] else {
                throw .invalid(RequestError(.rule, "\(quotedForMessage(id)) is not paused"))
            }
            guard var request = load(id), case .interval(let span, _) = request.trigger.rule else { throw .unknown([id]) }
            let next = now + remaining
            // The timer counts from a new start, so every later re-plan (a clock jump, a restart)
            // finds the same next time.
            request.trigger.anchor = next - span
            resumed.append((request, next))
        }
        do {
            try store.write { () throws(StoreError) in
                for (request, next) in resumed { try store.add(request, nextFire: next) }  // the pause goes with it
            }
        } catch {
            throw .store(error)
        }
        for (request, next) in resumed { requeue(request.identifier, next) }
        return resumed.map { ($0.request.identifier, $0.next) }
    }

    /// Refuses identifiers that are not pending.
    func refuseUnknown(_ identifiers: [String]) throws(SchedulerError) {
        var unknown: [String] = []
        do {
            for id in identifiers where try store.scheduledTime(of: id) == nil { unknown.append(id) }
        } catch {
            throw .store(error)
        }
        if !unknown.isEmpty { throw .unknown(unknown) }
    }

    /// A quarantined alarm is kept and listed, never fired: a call that would plan it again or
    /// change how it fires is refused (`chime cancel` removes it).
    func refuseQuarantined(_ identifiers: [String]) throws(SchedulerError) {
        for id in identifiers {
            let time: ScheduledTime?
            do { time = try store.scheduledTime(of: id) } catch { throw .store(error) }
            if let reason = time?.quarantine {
                throw .invalid(RequestError(.id, "\(quotedForMessage(id)) is quarantined (\(reason)); chime cancel \(id) removes it"))
            }
        }
    }

    /// The alarm file's alarms are changed in the file: a call that would change one is refused.
    func refuseFileAlarms(_ identifiers: [String]) throws(SchedulerError) {
        var owned: [String] = []
        do {
            for id in identifiers where try store.isFileAlarm(id) { owned.append(id) }
        } catch {
            throw .store(error)
        }
        if !owned.isEmpty { throw .fromAlarmFile(owned) }
    }

    /// Snooze: the alarm rings again after its snooze time (or `span`, when one was chosen), then a
    /// repeating one keeps its rule.
    @discardableResult
    func snooze(_ delivered: DeliveredNotification, for span: TimeSpan? = nil) -> Instant {
        let snooze = span ?? delivered.content.snooze ?? AlarmDefaults.snooze
        let at = clock.now() + snooze
        logging { () throws(StoreError) in
            // The snooze is kept as such (`snoozed`): a re-plan (a clock jump, a resume, a change of
            // zone or of days off) keeps it as the alarm's next time.
            try store.write { () throws(StoreError) in
                if try store.scheduledTime(of: delivered.identifier) != nil {
                    try events.keepInFlight(delivered.identifier)
                    try store.setNextFire(delivered.identifier, at)
                } else {
                    // A snoozed one-off is pending again until its snooze rings.
                    var content = delivered.content
                    content.subtitle = ""
                    let again = NotificationRequest(
                        identifier: delivered.identifier, content: content,
                        // Anchored when it was snoozed, as a one-off set then: a re-plan looks for
                        // its time after the anchor (anchored at its own time, a re-plan lost it).
                        trigger: Trigger(rule: .instant(at), repeats: false, timeZone: nil, anchor: clock.now()))
                    // (A calendar's one-off stays the calendar's: its reading then gives it with the snooze.)
                    let fromFile = try store.isFileAlarm(delivered.identifier) || delivered.content.userInfo[CalendarKeys.uid] != nil
                    try store.add(again, nextFire: at, origin: fromFile ? .file : .commandLine)
                }
                try store.setSnoozed(delivered.identifier, until: at)
            }
            queue.schedule(delivered.identifier, at: at)
            changed(delivered.identifier)
            logger.info("snoozed for \(snooze)", metadata: ["alarm.id": "\(delivered.identifier)"])
        }
        return at
    }
}
