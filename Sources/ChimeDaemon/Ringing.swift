// An alarm's sound, and an alarm that rings until it is answered: its sound repeats — played
// again by the local player each time it ends, or, where the server plays sounds, the popup sent
// again in place (replaces_id) — until Snooze or Dismiss is pressed, the popup is closed, the
// alarm is cancelled, or its ring time ends. A ring that ends unanswered is recorded (`chime list
// --missed`, the `RangOut` signal) and, when the alarm asks for it, snoozes itself.
//
// What rings, and until when, is in the store (`ringing`): a daemon restarted or killed mid-ring
// rings again for the rest of the ring time while its popup is still up (the popup is sent again
// in place, so a server that tells only the connection that showed it, as dunst does, tells the
// new daemon of the answer); an answered ring is taken out of the store first, and never rings again.
//
// Other parts may: `start` a shown alarm's sound (once, or ringing); `stop` a ring (by alarm or by
// popup); ask `identifier(ringingOn:)`; `resume` at start. The part tells its owner through
// `rangOut` when a ring ends unanswered.
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// Why a sound cannot be previewed.
struct PreviewError: Error {
    var message: String
}

final class Ringing: LoopPart {
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

    private var rings: [String: Ring] = [:] {
        didSet { if Set(rings.keys) != Set(oldValue.keys) { ringingChanged = true } }
    }
    /// Whether an alarm started or stopped ringing since the last `takeChange()`.
    private var ringingChanged = false
    private let store: Store
    private let children: ChildProcesses
    private let client: NotificationClient
    private let clock: WallClock
    private let logger: Logger
    /// The local sound player for servers that do not play sounds.
    let player: (name: String, path: String)?
    /// How long a sound player may run.
    var playerTimeLimit = TimeSpan.seconds(30)

    /// A ring ended unanswered: the alarm, its occurrence, its popup, and whether it snoozes itself.
    var rangOut: (_ identifier: String, _ due: Instant, _ serverID: UInt32, _ snoozes: Bool) -> Void = { _, _, _, _ in }
    /// A popup of an earlier run was sent again in place at a resumed ring: its answers come here now.
    var resent: (_ serverID: UInt32) -> Void = { _ in }

    init(store: Store, children: ChildProcesses, client: NotificationClient, clock: WallClock, logger: Logger) {
        self.store = store
        self.children = children
        self.client = client
        self.clock = clock
        self.logger = logger
        player = findSoundPlayer()
    }

    /// The alarm whose ring shows in popup `serverID`, if one rings.
    func identifier(ringingOn serverID: UInt32) -> String? {
        rings.values.first { $0.serverID == serverID }?.identifier
    }

    /// What rings now, soonest due first: for the app's ringing page (`ListRinging`).
    var current: [(identifier: String, due: Instant, until: Instant, title: String)] {
        rings.values.sorted { ($0.due, $0.identifier) < ($1.due, $1.identifier) }
            .map { ($0.identifier, $0.due, $0.until, $0.content.title) }
    }

    /// The alarms ringing now, if that changed since the last call (once per turn of the loop:
    /// `RingingChanged`); nil when it did not.
    func takeChange() -> [String]? {
        guard ringingChanged else { return nil }
        ringingChanged = false
        return current.map(\.identifier)
    }

    /// Whether `identifier` rings in popup `serverID`.
    func isRinging(_ identifier: String, on serverID: UInt32) -> Bool { rings[identifier]?.serverID == serverID }

    /// Plays a shown alarm's sound: rings it until answered when it rings, else once (where the
    /// server does not play it).
    func start(_ identifier: String, serverID: UInt32, due: Instant, content: NotificationContent, capabilities: [Capability]) {
        guard let sound = content.sound else { return }
        let byServer = capabilities.contains(.sound)
        guard content.rings else {
            if !byServer { _ = play(sound, for: identifier) }
            return
        }
        stop(identifier, because: "it rang again")
        let now = clock.now()
        var ring = Ring(identifier: identifier, serverID: serverID, due: due, started: now, until: now + (content.ring ?? .zero),
                        sound: sound, content: content, capabilities: capabilities, byServer: byServer)
        if byServer {
            ring.plays = 1  // the server played it with the popup
            ring.nextPlay = now + RingPolicy.serverRepeat
        } else {
            startPlayer(&ring)
        }
        rings[identifier] = ring
        record(ring)
        logger.info("ringing until answered, at most \(content.ring ?? .zero)", metadata: ["alarm.id": "\(identifier)"])
    }

    /// At start: rings again what rang when the daemon stopped, for the rest of its ring time, where
    /// its popup is still up; a ring whose time ended meanwhile is recorded as rung out.
    func resume() {
        let stored: [StoredRing]
        do { stored = try store.rings() } catch {
            logger.error("\(error)")
            return
        }
        let now = clock.now()
        for saved in stored {
            guard let delivered = (try? store.delivered(identifier: saved.identifier)) ?? nil, delivered.serverID == saved.serverID,
                let sound = delivered.content.sound
            else {
                // Its popup is gone (closed, or its server left): it was answered, or cannot be.
                forget(saved.identifier)
                continue
            }
            var ring = Ring(identifier: saved.identifier, serverID: saved.serverID, due: saved.due, started: saved.started,
                            until: saved.until, sound: sound, content: delivered.content, capabilities: saved.capabilities,
                            byServer: saved.capabilities.contains(.sound))
            rings[saved.identifier] = ring
            if saved.until <= now {
                ringOut(saved.identifier)
                continue
            }
            logger.info("ringing again after a restart, until its ring time ends (\(saved.until - now) left)",
                        metadata: ["alarm.id": "\(saved.identifier)"])
            // Sent again in place: its sound where the server plays it, and the server's answers come
            // to this connection (dunst tells only the connection that showed a popup).
            sendAgain(&ring)
            resent(ring.serverID)
            if !ring.byServer { startPlayer(&ring) }
            rings[saved.identifier] = ring
        }
    }

    // MARK: - The loop

    var deadline: Instant? {
        rings.values.flatMap { [$0.until] + ($0.nextPlay.map { [$0] } ?? []) }.min()
    }

    /// Plays again what is due, and ends the rings whose time is up.
    func deadlineReached(now: Instant) {
        for (identifier, ring) in rings {
            if ring.until <= now {
                ringOut(identifier)
            } else if let next = ring.nextPlay, next <= now {
                playAgain(identifier)
            }
        }
    }

    private func playAgain(_ identifier: String) {
        guard var ring = rings[identifier] else { return }
        ring.nextPlay = nil
        if ring.byServer { sendAgain(&ring) } else { startPlayer(&ring) }
        rings[identifier] = ring
    }

    /// The same popup, sent in place: where the server plays sounds, it plays it again.
    private func sendAgain(_ ring: inout Ring) {
        let identifier = ring.identifier
        var content = ring.content
        if content.expiry == .serverDefault { content.expiry = .never }  // as it was first sent
        let notification = render(content, for: ring.capabilities, replacesID: ring.serverID).notification
        do {
            let call = try client.beginNotify(notification)
            try call.onCompletion { [weak self] answer in
                // A server that refuses the repeat ends the ring's sound; the popup stays.
                if case .failure(let error) = answer {
                    self?.logger.warning("the server refused the ring's repeat (\(ServerSession.describe(error))); the sound stops",
                                         metadata: ["alarm.id": "\(identifier)"])
                    if self?.rings[identifier]?.byServer == true { self?.rings[identifier]?.nextPlay = nil }
                }
            }
            if ring.byServer {
                ring.plays += 1
                ring.nextPlay = clock.now() + RingPolicy.serverRepeat
            }
        } catch {
            logger.warning("could not send the ring again: \(error)", metadata: ["alarm.id": "\(identifier)"])
        }
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

    /// The player of the last preview, stopped when another starts.
    private var previewPlayer: pid_t?

    /// Plays `sound` once through the local player, as the app's Preview button asks; a preview
    /// still playing stops first. Throws why it cannot play (no player, no such file).
    func preview(_ sound: Sound) throws(PreviewError) {
        if let previewPlayer { children.stop(previewPlayer) }
        previewPlayer = nil
        guard let player else {
            throw PreviewError(message: "no local sound player was found (\(soundPlayers.joined(separator: ", "))); the notification server plays alarms' sounds itself")
        }
        if let why = sound.whyUnplayable(with: .localPlayer(name: player.name, path: player.path)) { throw PreviewError(message: why) }
        guard let pid = play(sound, for: "preview") else { throw PreviewError(message: "\(player.name) could not be started") }
        previewPlayer = pid
    }

    /// Plays `sound` through the local player (the server does not play sounds): the player's process id.
    private func play(_ sound: Sound, for identifier: String) -> pid_t? {
        guard let player else {
            logger.warning("the notification server plays no sounds and no local player was found (\(soundPlayers.joined(separator: ", ")))")
            return nil
        }
        let (name, isFile): (String, Bool) = switch sound {
        case .default: (Sound.defaultName, false)
        case .named(let name): (name, false)
        case .file(let path): (path, true)
        }
        guard let arguments = playerArguments(player: player, sound: name, isFile: isFile) else {
            logger.warning("\(player.name) cannot play the sound \(name)", metadata: ["alarm.id": "\(identifier)"])
            return nil
        }
        do throws(SpawnError) {
            return try children.start(arguments, timeLimit: playerTimeLimit) { [weak self] child in
                self?.playerEnded(child.pid, succeeded: child.succeeded, ending: child.ending)
            }
        } catch {
            logger.warning("\(error)", metadata: ["alarm.id": "\(identifier)"])
            return nil
        }
    }

    /// A player ended: when it was a ring's, the sound starts again (unless the player failed, which
    /// would only fail again: the ring goes on without sound until it is answered or ends).
    private func playerEnded(_ pid: pid_t, succeeded: Bool, ending: String) {
        guard let (identifier, ring) = rings.first(where: { $0.value.player == pid }) else { return }
        rings[identifier]?.player = nil
        if succeeded {
            rings[identifier]?.nextPlay = max(clock.now(), ring.started + Self.smallestReplay * Int64(ring.plays))
        } else {
            logger.warning("the sound player failed (\(ending)); the alarm rings on without sound", metadata: ["alarm.id": "\(identifier)"])
        }
    }

    // MARK: - Stopping

    /// Stops a ring at once (the answer, a cancel, a replacement): the player is killed, and the
    /// ring leaves the store, so no restart rings it again.
    func stop(_ identifier: String, because reason: String) {
        guard let ring = rings.removeValue(forKey: identifier) else { return }
        if let pid = ring.player { children.stop(pid) }
        forget(identifier)
        logger.info("stopped ringing: \(reason) (\(ring.plays) play(s))", metadata: ["alarm.id": "\(identifier)"])
    }

    /// Stops the ring of the alarm the server's popup `serverID` shows, if one rings.
    func stop(serverID: UInt32, because reason: String) {
        if let identifier = identifier(ringingOn: serverID) { stop(identifier, because: reason) }
    }

    /// Its ring time ended and nobody answered: recorded, and the owner told (it snoozes the alarm
    /// when the alarm asks for it).
    func ringOut(_ identifier: String) {
        guard let ring = rings[identifier] else { return }
        stop(identifier, because: "its ring time ended unanswered")
        let snoozes = ring.content.autoSnooze
        let snoozeTime = ring.content.snooze ?? AlarmDefaults.snooze
        let reason = "rang \(ring.until - ring.started) unanswered" + (snoozes ? "; snoozed itself for \(snoozeTime)" : "")
        do {
            try store.recordMissed([MissedOccurrence(identifier: identifier, due: ring.due, recorded: clock.now(), reason: reason)])
        } catch {
            logger.error("\(error)")
        }
        logger.warning("\(reason)", metadata: ["alarm.id": "\(identifier)"])
        rangOut(identifier, ring.due, ring.serverID, snoozes)
    }

    // MARK: - The store

    private func record(_ ring: Ring) {
        do {
            try store.write(.firing) { () throws(StoreError) in
                try store.setRing(StoredRing(identifier: ring.identifier, serverID: ring.serverID, due: ring.due, started: ring.started,
                                             until: ring.until, capabilities: ring.capabilities))
            }
        } catch {
            logger.error("\(error)")
        }
    }

    private func forget(_ identifier: String) {
        do { try store.removeRing(identifier) } catch { logger.error("\(error)") }
    }
}
