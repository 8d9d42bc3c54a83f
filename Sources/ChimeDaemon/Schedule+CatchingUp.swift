// The schedule catching up: after a stop, a jump of the clock or a sleep, what fell due meanwhile
// is shown once (late, within its grace) or recorded missed; and what is due now (Schedule.swift).
import ChimeCenter
import DBus
import FoundationEssentials
import Logging
import Posix
import Timekeeping

extension Schedule {
    // MARK: - Catching up

    /// On start (`now`): charges a crash while firing, then queues every request from its
    /// stored next occurrence; one that passed while the daemon was down is shown once,
    /// marked missed, within its grace period, and older ones are recorded.
    /// With `holdingFile` (the alarm file is being read), an overdue alarm of the file waits for
    /// `catchUpHeld`: one changed while the daemon was down is not caught up in its old form.
    func catchUp(now: Instant, holdingFile: Bool = false) throws(StoreError) {
        // Planned in another zone (it changed while the daemon was down, or before the re-plan
        // reached the store): every alarm is planned again, as when the zone changes while it runs.
        let zone = ZoneFollower.fingerprint(now: now)
        let zoneChanged = try store.plan(.zone).map { $0 != zone } ?? false
        // Planned from a later time: the clock was set back while the daemon was down (or before
        // its re-plan reached the store), and what is ahead again is planned again.
        let setBack = try store.planTime(.from).map { now < $0 - .seconds(1) } ?? false
        if zoneChanged || setBack {
            logger.info(zoneChanged ? "the system time zone is not the one the alarms were planned in; re-evaluating every alarm"
                        : "the clock is before the time the alarms were planned from; re-evaluating every alarm")
            rescheduleAll(after: now, holding: { [store] in holdingFile && (try? store.isFileAlarm($0)) == true }, overdue: .missed)
            return
        }
        try store.setPlan(.zone, zone)
        var overdue: [ScheduledTime] = []
        let remindful = try store.identifiersWithReminders()
        for time in try store.scheduledTimes() where time.quarantine == nil {
            guard let next = time.nextFire else { continue }
            if next > now { queue.schedule(time.identifier, at: next) } else { overdue.append(time) }
            if remindful.contains(time.identifier), !time.disabled, !time.paused { planReminder(time.identifier, now: now) }
        }
        for time in overdue {
            if holdingFile, try store.isFileAlarm(time.identifier) {
                heldForFile.append(time.identifier)
                continue
            }
            firing(time.identifier) { catchUp(time, now: now) }
        }
    }

    /// The alarm file was read (and applied, or not): its overdue alarms are caught up as they are
    /// now (one the file changed was queued anew as it was applied).
    /// Those `keeping` names stay held (alarms of a synced calendar, until its sync ran).
    func catchUpHeld(now: Instant, keeping: (String) -> Bool = { _ in false }, timeliness: Timeliness = .missed) {
        let held = heldForFile
        heldForFile = held.filter(keeping)
        for identifier in held where !keeping(identifier) {
            guard let time = try? store.scheduledTime(of: identifier), time.quarantine == nil, let next = time.nextFire else { continue }
            if next > now { queue.schedule(identifier, at: next) } else { firing(identifier) { catchUp(time, now: now, timeliness: timeliness) } }
        }
    }

    /// Catches one request up to `now`: its occurrences that passed, the latest shown as
    /// `timeliness` (`.missed` after the daemon was down, `.late` after a sleep or a jump) when
    /// within its grace, every other one recorded missed.
    private func catchUp(_ time: ScheduledTime, now: Instant, timeliness: Timeliness = .missed) {
        guard let first = time.nextFire, let request = load(time.identifier) else { return }
        // Missed while down: find the latest occurrence that passed.
        var latest = first
        var older: [Instant] = []
        var steps = 0
        // (Never one it rang already: a snooze that ends before today's time rang, after the clock was set back.)
        while let next = nextFire(request, after: max(latest, time.lastFired ?? latest)), next <= now, steps < 100_000 {
            if older.count < 100 { older.append(latest) }
            latest = next
            steps += 1
        }
        logging { () throws(StoreError) in
            try store.write { () throws(StoreError) in
                try store.recordMissed(older.map { MissedOccurrence(identifier: request.identifier, due: $0, recorded: now) })
                // The store's next fire is the occurrence that rings now, so showing it (or holding it)
                // moves the alarm on from there, not from the first one it missed.
                if latest != first { try store.setNextFire(request.identifier, latest) }
            }
        }
        if now - latest <= request.content.grace ?? AlarmDefaults.grace {
            events.deliver(request, latest, timeliness, now)
        } else {
            logging { () throws(StoreError) in
                var next: Instant?
                try store.write { () throws(StoreError) in
                    try store.recordMissed([MissedOccurrence(identifier: request.identifier, due: latest, recorded: now)])
                    next = try advance(request, past: latest, now: now)
                }
                requeue(request.identifier, next)
            }
            signals.missed(request.identifier, due: latest)
        }
    }

    /// After a clock jump, a resume from sleep (which the kernel reports to the timer as a clock
    /// change) or a change of zone: every request's next occurrence is computed again. What fell due
    /// between the old plan and now (the machine slept, or the clock jumped ahead) is not skipped: it
    /// is caught up as at start, one ring for the latest occurrence, marked late (or recorded missed
    /// past its grace), the older ones recorded missed.
    /// Overdue alarms `holding` names wait for `catchUpHeld` (alarms of a synced calendar, whose
    /// sync may bring what the other machines answered meanwhile).
    func rescheduleAll(after now: Instant, holding: (String) -> Bool = { _ in false }, overdue timeliness: Timeliness = .late) {
        queue = OccurrenceQueue()
        reminders = OccurrenceQueue()
        changedAll()
        var overdue: [ScheduledTime] = []
        logging { () throws(StoreError) in
            let times = try store.scheduledTimes()
            let snoozes = try store.snoozes()
            try store.write { () throws(StoreError) in
                let zone = ZoneFollower.fingerprint(now: now)
                // (A clock set back to before the change is in the new zone all the same.)
                if let planned = try store.plan(.zone), planned != zone { try store.setPlanTime(.zoneSince, now) }
                else if let since = try store.planTime(.zoneSince), since > now { try store.setPlanTime(.zoneSince, now) }
                try store.setPlan(.zone, zone)
                try notePlanned(from: now)
                for time in times where time.quarantine == nil && !time.disabled && !time.paused {
                    // One already on its way to the server is held (shown once, also if the daemon
                    // stops before the server answers) and the alarm moved on from it, as when a
                    // server is missing: after the clock was set back, planned again from before
                    // it, it would be shown a second time; kept as the next fire, a stop would
                    // leave it to a plan that no longer has it (another zone's), and it would be
                    // lost. Moved on from it, not from now: what came due since is caught up.
                    if let onItsWay = time.nextFire, events.inFlight(time.identifier, onItsWay) {
                        guard let request = try store.request(withIdentifier: time.identifier) else { continue }
                        try events.keepInFlight(time.identifier)
                        mark(time.identifier)
                        let next = try advance(request, past: onItsWay, now: now)
                        marker.clear()
                        if let next, next <= now {
                            var moved = time
                            moved.nextFire = next
                            moved.lastFired = max(time.lastFired ?? onItsWay, onItsWay)
                            overdue.append(moved)
                        } else if let next {
                            queue.schedule(time.identifier, at: next)
                            if !request.trigger.leads.isEmpty { planReminder(request, now: now) }
                        }
                        continue
                    }
                    if let next = time.nextFire, next <= now {
                        overdue.append(time)
                        continue
                    }
                    // A snooze still to ring is kept: it was asked for a length of time, not a plan.
                    if let next = time.nextFire, snoozes[time.identifier] == next {
                        queue.schedule(time.identifier, at: next)
                        continue
                    }
                    guard let request = try store.request(withIdentifier: time.identifier) else { continue }
                    // A wall-clock rule plans from the new now (after a jump back, today's 16:35 is
                    // still ahead) but never rings an occurrence it already rang; a timer keeps
                    // counting from when it was set. (Nor the instant it was set, this very second:
                    // set at 10:51:00, a daily 10:51 is next tomorrow, as `add` planned it.)
                    let anchor = request.trigger.anchor
                    let base: Instant = switch request.trigger.rule {
                    case .calendar, .recurrence: max(time.lastFired ?? .earliest, now - .seconds(1), anchor <= now ? anchor : .earliest)
                    case .interval, .instant: max(time.lastFired ?? request.trigger.anchor, now - .seconds(1))
                    }
                    // Computing the next fire is work on one request: on the record, like firing it.
                    mark(time.identifier)
                    let next = nextFire(request, after: base)
                    marker.clear()
                    try store.setNextFire(time.identifier, next)
                    if let next { queue.schedule(time.identifier, at: next) }
                    if next != nil, !request.trigger.leads.isEmpty { planReminder(request, now: now) }
                }
            }
        }
        for time in overdue {
            if holding(time.identifier) {
                if !heldForFile.contains(time.identifier) { heldForFile.append(time.identifier) }
                continue
            }
            firing(time.identifier) { catchUp(time, now: now, timeliness: timeliness) }
        }
    }

    /// Alarms were planned from `now`: kept when it is the latest time they were planned from.
    func notePlanned(from now: Instant) throws(StoreError) {
        if try store.planTime(.from).map({ $0 >= now }) != true { try store.setPlanTime(.from, now) }
    }


    // MARK: - Due

    func fireDue() {
        let now = clock.now()
        for (identifier, due) in reminders.popDue(now) {
            firing(identifier) {
                guard let request = load(identifier) else { return }
                // The reminder due now: the occurrence it is for, and how long before it.
                if let reminder = request.trigger.nextReminder(after: due - TimeSpan(nanoseconds: 1), off: off(for: request)), reminder.at == due {
                    events.remind(request, reminder.occurrence, reminder.lead)
                }
                planReminder(request, now: due)
            }
        }
        for (identifier, due) in queue.popDue(now) {
            firing(identifier) {
                // Long past (it came due while the occurrence before it was on its way, through a
                // sleep), or found past its time while the machine is known asleep (the timer fired
                // at resume, before logind's word that it woke): caught up as after a stop, the
                // latest late and any older recorded missed.
                let overdue = now - due > Self.lateAfter || (asleepSince != nil && now - due > Self.sleptPast)
                if overdue, let time = try? store.scheduledTime(of: identifier), time.nextFire == due {
                    return catchUp(time, now: now, timeliness: .late)
                }
                guard let request = load(identifier) else {
                    logger.debug("due at \(due), but no longer stored", metadata: ["alarm.id": "\(identifier)"])
                    return
                }
                logger.debug("due at \(due)", metadata: ["alarm.id": "\(identifier)"])
                events.deliver(request, due, .onTime, now)
            }
        }
    }

    /// How long past its time an occurrence still fires as on time.
    static let lateAfter = TimeSpan.seconds(60)
    /// While the machine is known asleep, how long past its time an occurrence still fires as on
    /// time (one due in the moments between logind's word and the sleep itself).
    static let sleptPast = TimeSpan.seconds(1)

    /// Moves `request` past its occurrence at `due` in the store: to its next
    /// occurrence, or out of the pending list when a one-off is done (and none of its occurrences is
    /// held or waiting to be retried).
    /// Call inside a store transaction; the queue follows once it commits.
    @discardableResult
    func advance(_ request: NotificationRequest, past due: Instant, now: Instant) throws(StoreError) -> Instant? {
        // From the occurrence shown, not from now: one that came due while it was on its way (a
        // sleep with its Notify unanswered) is caught up, not skipped. Never again one it rang
        // (a snooze after the clock was set back ends before today's time it already rang).
        // Nor one of a new zone's times before the zone changed (they never came due).
        let lastFired = try store.scheduledTime(of: request.identifier)?.lastFired
        let zoneSince = try store.planTime(.zoneSince).map { $0 - .seconds(1) }
        var next = nextFire(request, after: max(due, lastFired ?? due, zoneSince ?? due))
        // Nor one the presenter has (after the clock was set back, one on its way or held): it is
        // shown from there.
        var passed = 0
        while let planned = next, passed < 100, events.presenterHas(request.identifier, planned) {
            next = nextFire(request, after: planned)
            passed += 1
        }
        if next == nil, try !events.isDetached(request.identifier) {
            // A one-off that has fired leaves the pending list, as on iOS.
            try store.remove([request.identifier])
        } else {
            try store.setNextFire(request.identifier, next, handled: due)
        }
        return next
    }

    /// `hasReminders`, when the caller knows it, saves asking the store.
    func requeue(_ identifier: String, _ next: Instant?, hasReminders: Bool? = nil) {
        if let next { queue.schedule(identifier, at: next) } else { queue.cancel(identifier) }
        if next == nil {
            reminders.cancel(identifier)
        } else if hasReminders ?? ((try? store.hasReminders(identifier)) == true) {
            planReminder(identifier, now: clock.now())
        } else {
            reminders.cancel(identifier)
        }
        changed(identifier)
    }

    /// Queues the alarm's next reminder after `now`, or none.
    func planReminder(_ identifier: String, now: Instant) {
        guard let request = load(identifier) else { return reminders.cancel(identifier) }
        planReminder(request, now: now)
    }

    func planReminder(_ request: NotificationRequest, now: Instant) {
        if let reminder = request.trigger.nextReminder(after: now, off: off(for: request)) {
            reminders.schedule(request.identifier, at: reminder.at)
        } else {
            reminders.cancel(request.identifier)
        }
    }
}
