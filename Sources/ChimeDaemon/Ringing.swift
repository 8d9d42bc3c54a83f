// An alarm that rings until it is answered: its sound repeats — played again by the local
// player each time it ends, or, where the server plays sounds, the popup sent again in place
// (replaces_id) — until Snooze or Dismiss is pressed, the popup is closed, the alarm is
// cancelled, or its ring time ends. A ring that ends unanswered is recorded (`chime list
// --missed`, the `RangOut` signal) and, when the alarm asks for it, snoozes itself.
//
// Ringing lives in memory: a daemon restarted while an alarm rings does not ring it again
// (the popup, if the server still shows it, stays).
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

extension SchedulerDaemon {
    /// One alarm ringing.
    struct Ring {
        var identifier: String
        var serverID: UInt32
        var due: Instant
        var started: Instant
        /// When it stops unanswered.
        var until: Instant
        var sound: Sound
        /// What was shown, to send again where the server plays the sound.
        var content: NotificationContent
        var capabilities: [Capability]
        /// The server plays the sound: the popup is sent again every `RingPolicy.serverRepeat`.
        var byServer: Bool
        /// When the sound starts again (nil: playing now, or not again).
        var nextPlay: Instant?
        /// The local player playing it now.
        var player: pid_t?
        var plays = 0
        /// Starts of the player that failed in a row (a binary being replaced: ETXTBSY).
        var failedStarts = 0
    }

    /// How many failed starts of the player in a row end the sound (the ring goes on silently).
    static let playerStartAttempts = 3

    /// The smallest gap between two starts of the local player, so a player that ends at once
    /// cannot make a busy loop.
    static let smallestReplay = TimeSpan.seconds(1)

    /// Starts ringing a shown alarm (`shown`); plays it once when it does not ring.
    func startRinging(_ identifier: String, serverID: UInt32, due: Instant, content: NotificationContent, capabilities: [Capability]) {
        guard let sound = content.sound else { return }
        let byServer = capabilities.contains(.sound)
        guard content.rings else {
            if !byServer { _ = play(sound, for: identifier) }
            return
        }
        stopRinging(identifier, because: "it rang again")
        let now = clock.now()
        var ring = Ring(identifier: identifier, serverID: serverID, due: due, started: now, until: now + (content.ring ?? .zero),
                        sound: sound, content: content, capabilities: capabilities, byServer: byServer)
        if byServer {
            ring.plays = 1  // the server played it with the popup
            ring.nextPlay = now + RingPolicy.serverRepeat
        } else {
            startPlayer(&ring)
        }
        ringing[identifier] = ring
        logger.info("ringing until answered, at most \(content.ring ?? .zero)", metadata: ["alarm.id": "\(identifier)"])
    }

    /// The next time something about a ring is due (for the timer).
    var nextRingEvent: Instant? {
        ringing.values.flatMap { [$0.until] + ($0.nextPlay.map { [$0] } ?? []) }.min()
    }

    /// Plays again what is due, and ends the rings whose time is up.
    func ringDue(now: Instant) {
        for (identifier, ring) in ringing {
            if ring.until <= now {
                ringOut(identifier)
            } else if let next = ring.nextPlay, next <= now {
                playAgain(identifier)
            }
        }
    }

    private func playAgain(_ identifier: String) {
        guard var ring = ringing[identifier] else { return }
        ring.nextPlay = nil
        if ring.byServer {
            // The same popup, sent in place: the server plays its sound again.
            var content = ring.content
            if content.expiry == .serverDefault { content.expiry = .never }  // as `present` sent it
            let notification = render(content, for: ring.capabilities, replacesID: ring.serverID).notification
            do {
                let call = try client.beginNotify(notification)
                try call.onCompletion { [weak self] answer in
                    // A server that refuses the repeat ends the ring's sound; the popup stays.
                    if case .failure(let error) = answer {
                        self?.logger.warning("the server refused the ring's repeat (\(Self.describe(error))); the sound stops",
                                             metadata: ["alarm.id": "\(identifier)"])
                        self?.ringing[identifier]?.nextPlay = nil
                    }
                }
                ring.plays += 1
                ring.nextPlay = clock.now() + RingPolicy.serverRepeat
            } catch {
                logger.warning("could not send the ring again: \(error)", metadata: ["alarm.id": "\(identifier)"])
            }
        } else {
            startPlayer(&ring)
        }
        ringing[identifier] = ring
    }

    /// Starts the local player for a ring; a player that could not start (its file being replaced,
    /// say) is tried again a second later, up to `playerStartAttempts` times in a row.
    private func startPlayer(_ ring: inout Ring) {
        ring.player = play(ring.sound, for: ring.identifier)
        if ring.player != nil {
            ring.plays += 1
            ring.failedStarts = 0
        } else if player != nil {
            ring.failedStarts += 1
            if ring.failedStarts < Self.playerStartAttempts { ring.nextPlay = clock.now() + Self.smallestReplay }
        }
    }

    /// A child ended: when it was a ring's player, the sound starts again (unless the player failed,
    /// which would only fail again: the ring goes on without sound until it is answered or ends).
    func playerEnded(_ pid: pid_t, succeeded: Bool, ending: String) {
        guard let (identifier, ring) = ringing.first(where: { $0.value.player == pid }) else { return }
        ringing[identifier]?.player = nil
        if succeeded {
            ringing[identifier]?.nextPlay = max(clock.now(), ring.started + Self.smallestReplay * Int64(ring.plays))
        } else {
            logger.warning("the sound player failed (\(ending)); the alarm rings on without sound", metadata: ["alarm.id": "\(identifier)"])
        }
    }

    /// Stops a ring at once (the answer, a cancel, a replacement): the player is killed.
    func stopRinging(_ identifier: String, because reason: String) {
        guard let ring = ringing.removeValue(forKey: identifier) else { return }
        if let pid = ring.player { children[pid]?.kill() }
        logger.info("stopped ringing: \(reason) (\(ring.plays) play(s))", metadata: ["alarm.id": "\(identifier)"])
    }

    /// Stops the ring of the alarm the server's popup `serverID` shows, if one rings.
    func stopRinging(serverID: UInt32, because reason: String) {
        if let ring = ringing.values.first(where: { $0.serverID == serverID }) { stopRinging(ring.identifier, because: reason) }
    }

    /// Its ring time ended and nobody answered: recorded, and snoozed when the alarm asks for it.
    func ringOut(_ identifier: String) {
        guard let ring = ringing[identifier] else { return }
        stopRinging(identifier, because: "its ring time ended unanswered")
        awakeFor[identifier] = nil
        let now = clock.now()
        let snoozes = ring.content.autoSnooze
        let snoozeTime = ring.content.snooze ?? Self.defaultSnooze
        let reason = "rang \(ring.until - ring.started) unanswered" + (snoozes ? "; snoozed itself for \(snoozeTime)" : "")
        logging { () throws(StoreError) in
            try store.recordMissed([MissedOccurrence(identifier: identifier, due: ring.due, recorded: now, reason: reason)])
        }
        emit("RangOut", [.string(identifier), .int64(ring.due.seconds), .boolean(snoozes)])
        logger.warning("\(reason)", metadata: ["alarm.id": "\(identifier)"])
        if snoozes, let delivered = (try? store.delivered(identifier: identifier)) ?? nil, delivered.serverID == ring.serverID {
            firing(identifier) { snooze(delivered) }
            try? client.requestClose(ring.serverID)
        }
    }
}
