// Showing an occurrence: held while no server runs, its body command run first, sent
// to the server, recorded, its sound played, its popup closed past its expiry; and
// what the server tells us back (closed, Snooze, Dismiss).
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

extension SchedulerDaemon {
    /// One occurrence on its way to the screen.
    struct Occurrence {
        var request: NotificationRequest
        var due: Instant
        var timeliness: Timeliness
        /// Held for a server earlier: the request has already moved past it.
        var held: Bool
    }

    /// Shows one occurrence: holds it while no server runs, runs its body command first if it has one.
    func deliver(_ request: NotificationRequest, due: Instant, timeliness: Timeliness, now: Instant, held: Bool = false) {
        let identifier = request.identifier
        if !serverPresent {
            logger.warning("no notification server; holding the alarm until one appears", metadata: ["alarm.id": "\(identifier)"])
            hold(request, due: due, now: now, alreadyHeld: held)
            return
        }
        var content = request.content
        switch timeliness {
        case .onTime: break
        case .late: content.subtitle = Self.joined("Late: due at \(clock(due, request))", content.subtitle)
        case .missed: content.subtitle = Self.joined("Missed at \(clock(due, request))", content.subtitle)
        }
        let occurrence = Occurrence(request: request, due: due, timeliness: timeliness, held: held)
        if let command = content.bodyCommand {
            do throws(SpawnError) {
                let child = try spawnChild(command.arguments, captureOutput: true, outputLimit: command.outputLimit,
                                           deadline: clock.now() + command.timeLimit)
                children[child.pid] = child
                preparing[child.pid] = Preparing(occurrence: occurrence, content: content)
                return  // shown when the command finishes (finishChildren)
            } catch {
                logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
                content.body = Self.withNote(content.body, "body command could not start: \(error.reason.lowercased())")
            }
        }
        show(occurrence, content: content, now: now)
    }

    /// Keeps an occurrence for when a server appears (durably) and moves the request on.
    func hold(_ request: NotificationRequest, due: Instant, now: Instant, alreadyHeld: Bool) {
        if !waiting.contains(where: { $0 == (request.identifier, due) }) { waiting.append((request.identifier, due)) }
        guard !alreadyHeld else { return }
        logging { () throws(StoreError) in
            var next: Instant?
            try store.write(.firing) { () throws(StoreError) in
                try store.hold(request.identifier, due: due)
                next = try advance(request, past: due, now: now)
            }
            requeue(request.identifier, next)
        }
    }

    static func joined(_ note: String, _ subtitle: String) -> String {
        subtitle.isEmpty ? note : note + " · " + subtitle
    }

    /// The static body and a short note on why it is not the command's output.
    static func withNote(_ body: String, _ note: String) -> String {
        body.isEmpty ? "(\(note))" : body + "\n(\(note))"
    }

    /// Sends one occurrence to the server, records it, plays its sound, and moves the request on.
    func show(_ occurrence: Occurrence, content: NotificationContent, now: Instant) {
        let identifier = occurrence.request.identifier
        do {
            let capabilities = try self.capabilities ?? client.capabilities()
            self.capabilities = capabilities
            let previous = (try? store.delivered(identifier: identifier))??.serverID ?? 0
            // The subtitle carries "Late"/"Missed"; rendering folds it into the text the server shows.
            let rendered = render(content, for: capabilities, replacesID: previous)
            let serverID = try client.notify(rendered.notification)
            // Notify first, then the record: a crash in between repeats an alarm, never drops one.
            var next: Instant?? = .none
            logging { () throws(StoreError) in
                try store.write(.firing) { () throws(StoreError) in
                    try store.recordDelivered(DeliveredNotification(identifier: identifier, serverID: serverID, date: now, content: content))
                    if occurrence.held {
                        try store.release(identifier, due: occurrence.due)
                        // A one-off shown late is done now.
                        if try store.scheduledTime(of: identifier)?.nextFire == nil, try !store.isHeld(identifier) {
                            try store.remove([identifier])
                        }
                    } else {
                        next = .some(try advance(occurrence.request, past: occurrence.due, now: now))
                    }
                }
            }
            if case .some(let next) = next { requeue(identifier, next) }
            firedCleanly(identifier)
            emit("Fired", [.string(identifier), .int64(occurrence.due.seconds), .string(occurrence.timeliness.rawValue)])
            logger.info("fired", metadata: ["alarm.id": "\(identifier)", "notification.id": "\(serverID)",
                                            "timeliness": "\(occurrence.timeliness.rawValue)"])
            if let sound = content.sound, !capabilities.contains(.sound) { play(sound, for: identifier) }
            if case .after(let span) = content.expiry {
                closeDeadlines.append((clock.now() + span + Self.closeSlack, identifier, serverID))
            }
        } catch let error as NoNotificationServerError {
            logger.warning("\(error); holding the alarm", metadata: ["alarm.id": "\(identifier)"])
            serverPresent = false
            hold(occurrence.request, due: occurrence.due, now: now, alreadyHeld: occurrence.held)
        } catch {
            logger.error("could not show the alarm: \(error)", metadata: ["alarm.id": "\(identifier)"])
            if !occurrence.held {
                logging { () throws(StoreError) in
                    var next: Instant?
                    try store.write(.firing) { () throws(StoreError) in next = try advance(occurrence.request, past: occurrence.due, now: now) }
                    requeue(identifier, next)
                }
            }
        }
    }

    /// Plays `sound` through the local player (the server does not play sounds).
    func play(_ sound: Sound, for identifier: String) {
        guard let player else {
            logger.warning("the notification server plays no sounds and no local player was found (\(soundPlayers.joined(separator: ", ")))")
            return
        }
        let (name, isFile): (String, Bool) = switch sound {
        case .default: (Sound.defaultName, false)
        case .named(let name): (name, false)
        case .file(let path): (path, true)
        }
        guard let arguments = playerArguments(player: player, sound: name, isFile: isFile) else {
            logger.warning("\(player.name) cannot play the sound \(name)", metadata: ["alarm.id": "\(identifier)"])
            return
        }
        do throws(SpawnError) {
            let child = try spawnChild(arguments, captureOutput: false, outputLimit: 0, deadline: clock.now() + playerTimeLimit)
            children[child.pid] = child
        } catch {
            logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
        }
    }

    /// Hands finished body commands' output to their occurrences, stops children past
    /// their time limit, and forgets children that are done and reaped.
    func finishChildren() {
        guard !children.isEmpty else { return }
        let now = clock.now()
        for (pid, child) in children {
            if !child.finished, !child.isDone, now >= child.deadline {
                child.kill()
                child.timedOut = true
                logger.warning("stopped \(pid): it ran past its time limit")
            }
            if !child.finished, child.isDone || child.timedOut {
                child.finished = true
                if let waiting = preparing.removeValue(forKey: pid) {
                    firing(waiting.occurrence.request.identifier) { bodyCommandFinished(child, waiting) }
                }
            }
            if child.finished, child.waitStatus != nil { children[pid] = nil }
        }
    }

    func bodyCommandFinished(_ child: Child, _ waiting: Preparing) {
        var content = waiting.content
        guard (try? store.scheduledTime(of: waiting.occurrence.request.identifier)) != nil else {
            logger.info("cancelled while its body command ran", metadata: ["alarm.id": "\(waiting.occurrence.request.identifier)"])
            return
        }
        if child.timedOut {
            content.body = Self.withNote(content.body, "body command timed out after \(content.bodyCommand?.timeLimit.seconds ?? 0) s")
        } else if !child.succeeded {
            content.body = Self.withNote(content.body, "body command failed: \(child.ending)")
        } else {
            var text = String(decoding: child.collected.filter { $0 != 0 }, as: UTF8.self)
            while text.last?.isNewline == true { text.removeLast() }
            if child.truncated { text += "…" }
            // Output is plain text, even where the static body is markup.
            if !text.isEmpty { content.body = content.bodyIsMarkup ? escapeMarkup(text) : text }
        }
        show(waiting.occurrence, content: content, now: clock.now())
    }

    /// Closes popups whose expiry passed but which the server left up.
    func closeExpired() {
        guard !closeDeadlines.isEmpty else { return }
        let now = clock.now()
        let due = closeDeadlines.filter { $0.time <= now }
        closeDeadlines.removeAll { $0.time <= now }
        for entry in due where (try? store.delivered(identifier: entry.identifier))??.serverID == entry.serverID {
            logger.info("closing an expired popup the server left up", metadata: ["alarm.id": "\(entry.identifier)"])
            try? client.close(entry.serverID)
        }
    }

    /// "16:35": when an occurrence was due, on the alarm's own clock.
    func clock(_ time: Instant, _ request: NotificationRequest) -> String {
        let civil = request.trigger.zone.civil(at: time.seconds)
        return pad2(civil.hour) + ":" + pad2(civil.minute)
    }

    func serverOwnerChanged(to owner: String) {
        capabilities = nil
        serverPresent = !owner.isEmpty
        if serverPresent, !waiting.isEmpty { showHeld() }
    }

    /// Shows every occurrence held for a server, marked late.
    func showHeld() {
        let held = waiting
        waiting.removeAll()
        let now = clock.now()
        logger.info("a notification server is here; showing \(held.count) held alarm(s)")
        for (identifier, due) in held {
            firing(identifier) {
                guard let request = load(identifier) else {
                    logging { () throws(StoreError) in try store.release(identifier, due: due) }
                    return
                }
                deliver(request, due: due, timeliness: .late, now: now, held: true)
            }
        }
    }

    /// What the notification server says about a popup of ours: closed, or an action pressed.
    func handle(_ event: NotificationEvent) {
        switch event {
        case .closed(let id, _):
            if let delivered = try? store.delivered(serverID: id) {
                logging { () throws(StoreError) in try store.removeDelivered([delivered.identifier]) }
            }
        case .actionInvoked(let id, let key):
            guard let delivered = try? store.delivered(serverID: id) else { return }
            if key == NotificationAction.snooze.identifier {
                firing(delivered.identifier) { snooze(delivered) }
            }
            // Snooze and dismiss both take this ring down; a repeating alarm rings again at its next time.
            try? client.close(id)
        case .activationToken:
            break
        }
    }

    /// Snooze: the alarm rings again after its snooze time, then a repeating one keeps its rule.
    func snooze(_ delivered: DeliveredNotification) {
        let snooze = delivered.content.snooze ?? Self.defaultSnooze
        let at = clock.now() + snooze
        logging { () throws(StoreError) in
            if try store.scheduledTime(of: delivered.identifier) != nil {
                try store.setNextFire(delivered.identifier, at)
            } else {
                // A snoozed one-off is pending again until its snooze rings.
                var content = delivered.content
                content.subtitle = ""
                let again = NotificationRequest(
                    identifier: delivered.identifier, content: content,
                    trigger: Trigger(rule: .instant(at), repeats: false, timeZone: nil, anchor: at))
                try store.add(again, nextFire: at, origin: try store.isFileAlarm(delivered.identifier) ? .file : .commandLine)
            }
            queue.schedule(delivered.identifier, at: at)
            logger.info("snoozed for \(snooze)", metadata: ["alarm.id": "\(delivered.identifier)"])
        }
    }
}
