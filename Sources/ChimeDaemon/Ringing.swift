// An alarm's sound, and an alarm that rings until it is answered: its sound loops — played by
// chime (the Speaker part: through the sound server, else a player program), or, where only the
// notification server can play sounds, the popup sent again in place (replaces_id) — until Snooze
// or Dismiss is pressed, the popup is closed, the alarm is cancelled, or its ring time ends. A ring
// that sounds into a muted output says so in its popup and in `chime list --missed`. A ring that
// ends unanswered is recorded (`chime list --missed`, the `RangOut` signal) and, when the alarm asks
// for it, snoozes itself.
//
// During a phone call (PhoneCalls.swift) a ring is a quiet tone (`inCallVolume`, never raising
// the output) beside its vibration, and rings as it would have once the call ends; where the
// server plays the sound, it is not sent again until then.
//
// What rings, and until when, is in the store (`ringing`): a daemon restarted or killed mid-ring
// rings again for the rest of the ring time while its popup is still up (the popup is sent again
// in place, so a server that tells only the connection that showed it, as dunst does, tells the
// new daemon of the answer); an answered ring is taken out of the store first, and never rings again.
//
// Other parts may: `start` a shown alarm's sound (once, or ringing); `stop` a ring (by alarm or by
// popup); ask `identifier(ringingOn:)` and `soundCapabilities` (what a popup may ask the server to
// play); `resume` at start; tell it a play of its ended or sounds into a muted output
// (`soundEnded`, `soundSilent`: the speaker's events). It owns what rings and the store's `ringing`
// table (its face: `RingingStore`); it asks the speaker to play, the notification client to send a
// popup again, and the ledger what shows and what it sent again. It tells the others
// (`events.rangOut`) when a ring ends unanswered: what then happens to the alarm is the presenter's.
import ChimeCenter
import DBus
import Logging
import Notifications
import Sound
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

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
        /// When the server plays the sound again (the popup sent again in place).
        var nextPlay: Instant?
        /// chime's play of the sound (the Speaker's).
        var play: Int?
        var plays = 0
        /// It was said to ring into a muted output.
        var toldMuted = false
        /// Its sound plays quietly: a phone call was in progress when it started.
        var quiet = false
    }

    /// The volume (percent) of a ring during a phone call, at most: heard beside the call, not over it.
    static let inCallVolume = 15

    private var rings: [String: Ring] = [:] {
        didSet { if Set(rings.keys) != Set(oldValue.keys) { ringingChanged = true } }
    }
    /// Whether an alarm started or stopped ringing since the last `takeChange()`.
    private var ringingChanged = false
    private let store: any RingingStore
    private let speaker: any SoundFace
    private let ledger: any RingingLedger
    /// The notification server, for sending a popup again.
    private let server: any ServerFace
    private let clock: WallClock
    private let logger: Logger

    /// What ringing tells the other parts (wired by the daemon).
    struct Events {
        /// A ring ended unanswered: the alarm, its occurrence, its popup, and whether it snoozes itself.
        var rangOut: (_ identifier: String, _ due: Instant, _ serverID: UInt32, _ snoozes: Bool) -> Void = { _, _, _, _ in }
        /// Runs the resuming of an alarm's ring at start on the record, so a crash inside it is
        /// charged to that ring at the next start (the schedule's firing marker).
        var resuming: (_ identifier: String, _ body: () -> Void) -> Void = { _, body in body() }
        /// Why an alarm's ring is not resumed (the daemon stopped while resuming it last time), or nil.
        var resumeRefusal: (_ identifier: String) -> String? = { _ in nil }
        /// A ring began (`timer`: a timer's), or resumed after a restart: the phone vibrates until
        /// `ringStopped`.
        var ringStarted: (_ identifier: String, _ timer: Bool, _ insist: Bool) -> Void = { _, _, _ in }
        var ringStopped: (_ identifier: String) -> Void = { _ in }
        /// A sound played once (a timer's or alarm's that does not ring).
        var playedOnce: (_ timer: Bool, _ insist: Bool) -> Void = { _, _ in }
        /// Whether chime's own sound may play now (not while a phone is set to vibrate or silent,
        /// unless the alarm insists).
        var soundAllowed: (_ insist: Bool) -> Bool = { _ in true }
        /// Whether a phone call is in progress: sounds play quietly.
        var inCall: () -> Bool = { false }
    }
    var events = Events()

    init(store: any RingingStore, speaker: any SoundFace, ledger: any RingingLedger, server: any ServerFace, clock: WallClock, logger: Logger) {
        self.store = store
        self.speaker = speaker
        self.ledger = ledger
        self.server = server
        self.clock = clock
        self.logger = logger
    }

    /// The speaker's play `play` ended by itself: a ring it sounded rings on without sound.
    func soundEnded(_ play: Int) {
        guard let identifier = rings.values.first(where: { $0.play == play })?.identifier else { return }
        rings[identifier]?.play = nil
        logger.warning("the sound could not be played on; the alarm rings on without sound", metadata: ["alarm.id": "\(identifier)"])
    }

    /// The speaker's play `play` sounds into a muted or silent output.
    func soundSilent(_ play: Int, _ output: Output) {
        guard let identifier = rings.values.first(where: { $0.play == play })?.identifier else { return }
        rangMuted(identifier, output)
    }

    /// What a popup may tell the server of its sound: where chime plays sounds itself, the server
    /// is not asked to (`sound` is left out: the popup carries `suppress-sound`).
    func soundCapabilities(_ capabilities: [Capability]) -> [Capability] {
        speaker.playsItself ? capabilities.filter { $0 != .sound } : capabilities
    }

    /// How chime plays an alarm's sound.
    private func soundRequest(_ content: NotificationContent, looping: Bool, quiet: Bool = false) -> SoundRequest? {
        guard let sound = content.sound else { return nil }
        let volume = content.volume ?? 100
        return SoundRequest(sound: sound, volume: quiet ? min(volume, Self.inCallVolume) : volume, fade: quiet ? .zero : content.fade ?? .zero,
                            fadeFrom: content.fadeFrom ?? 0, looping: looping, insist: content.insist && !quiet, title: content.title)
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

    /// The occurrence `identifier` rings for, and its popup, if it rings.
    func ring(of identifier: String) -> (due: Instant, serverID: UInt32)? { rings[identifier].map { ($0.due, $0.serverID) } }

    /// Whether `identifier` rings in popup `serverID`.
    func isRinging(_ identifier: String, on serverID: UInt32) -> Bool { rings[identifier]?.serverID == serverID }

    /// Plays a shown alarm's sound: rings it until answered when it rings, else once (where the
    /// server does not play it).
    func start(_ identifier: String, serverID: UInt32, due: Instant, content: NotificationContent, capabilities: [Capability],
               timer: Bool = false) {
        guard let sound = content.sound else { return }
        let byServer = capabilities.contains(.sound)
        let audible = events.soundAllowed(content.insist)
        let quiet = events.inCall()
        guard content.rings else {
            if audible, !byServer, let request = soundRequest(content, looping: false, quiet: quiet) { _ = speaker.play(request) }
            events.playedOnce(timer, content.insist)
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
            ring.play = audible ? soundRequest(content, looping: true, quiet: quiet).map(speaker.play) : nil
            ring.plays = 1
        }
        ring.quiet = quiet
        if quiet { logger.info("a phone call is in progress: ringing as a quiet tone and vibration", metadata: ["alarm.id": "\(identifier)"]) }
        if !audible { logger.info("ringing without chime's sound: the phone is set to vibrate or to silence", metadata: ["alarm.id": "\(identifier)"]) }
        rings[identifier] = ring
        record(ring)
        events.ringStarted(identifier, timer, content.insist)
        logger.info("ringing until answered, at most \(content.ring ?? .zero)", metadata: ["alarm.id": "\(identifier)"])
    }

    /// At start: rings again what rang when the daemon stopped, for the rest of its ring time, where
    /// its popup is still up; a ring whose time ended meanwhile is recorded as rung out. Each is
    /// resumed on the record: one the daemon stopped while resuming is not resumed again (its popup
    /// stays up; `chime list --missed` says why), and a crash costs nothing else.
    func resume() {
        let stored: [StoredRing]
        do { stored = try store.rings() } catch {
            logger.error("\(error)")
            return
        }
        let now = clock.now()
        for saved in stored {
            if let refusal = events.resumeRefusal(saved.identifier) {
                forget(saved.identifier)
                logger.error("\(refusal)", metadata: ["alarm.id": "\(saved.identifier)"])
                do {
                    try store.recordMissed([MissedOccurrence(identifier: saved.identifier, due: saved.due, recorded: now, reason: refusal)])
                } catch {
                    logger.error("\(error)")
                }
                continue
            }
            events.resuming(saved.identifier) { resume(saved, now: now) }
        }
    }

    /// Resumes one stored ring.
    private func resume(_ saved: StoredRing, now: Instant) {
        guard let delivered = (try? ledger.delivered(identifier: saved.identifier)) ?? nil, delivered.serverID == saved.serverID,
            let sound = delivered.content.sound
        else {
            // Its popup is gone (closed, or its server left): it was answered, or cannot be.
            forget(saved.identifier)
            return
        }
        var ring = Ring(identifier: saved.identifier, serverID: saved.serverID, due: saved.due, started: saved.started,
                        until: saved.until, sound: sound, content: delivered.content, capabilities: saved.capabilities,
                        byServer: saved.capabilities.contains(.sound))
        rings[saved.identifier] = ring
        if saved.until <= now {
            ringOut(saved.identifier)
            return
        }
        logger.info("ringing again after a restart, until its ring time ends (\(saved.until - now) left)",
                    metadata: ["alarm.id": "\(saved.identifier)"])
        // Sent again in place: its sound where the server plays it, and the server's answers come
        // to this connection (dunst tells only the connection that showed a popup).
        sendAgain(&ring)
        ledger.shown(ring.serverID)  // its answers come to this connection now
        ring.quiet = events.inCall()
        if !ring.byServer, events.soundAllowed(ring.content.insist) {
            ring.play = soundRequest(ring.content, looping: true, quiet: ring.quiet).map(speaker.play)
        }
        rings[saved.identifier] = ring
        events.ringStarted(saved.identifier, false, ring.content.insist)
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

    /// The server plays the sound again: the popup is sent again in place.
    private func playAgain(_ identifier: String) {
        guard var ring = rings[identifier] else { return }
        ring.nextPlay = nil
        // Not over a phone call: looked at again after the usual pause.
        if events.inCall() {
            ring.nextPlay = clock.now() + RingPolicy.serverRepeat
            rings[identifier] = ring
            return
        }
        sendAgain(&ring)
        rings[identifier] = ring
    }

    /// A phone call began or the last one ended: chime's sound of each ring plays again, quietly
    /// or as the alarm asks.
    func callChanged(_ inCall: Bool) {
        for (identifier, var ring) in rings where !ring.byServer && ring.quiet != inCall {
            ring.quiet = inCall
            if let play = ring.play {
                ring.play = nil
                speaker.stop(play)
                ring.play = soundRequest(ring.content, looping: true, quiet: inCall).map(speaker.play)
            }
            rings[identifier] = ring
            logger.info(inCall ? "a phone call began: ringing as a quiet tone and vibration" : "the phone call ended: ringing as usual",
                        metadata: ["alarm.id": "\(identifier)"])
        }
    }

    /// A ring sounds into a muted or silent output (and does not insist): its popup says so, sent
    /// again in place, and `chime list --missed` records it.
    private func rangMuted(_ identifier: String, _ output: Output) {
        guard var ring = rings[identifier], !ring.toldMuted else { return }
        ring.toldMuted = true
        let how = output.muted ? tr("the sound output is muted") : tr("the sound output is turned all the way down")
        let note = tr("Rang muted: %s", how)
        ring.content.body = ring.content.body.isEmpty ? note : ring.content.body + "\n" + note
        logger.warning("rang muted: the output \(output.sink) is \(output.muted ? "muted" : "at 0%")", metadata: ["alarm.id": "\(identifier)"])
        sendAgain(&ring)
        rings[identifier] = ring
        do {
            let reason = "rang muted (the output \(output.sink) was \(output.muted ? "muted" : "at 0%"))"
            try store.recordMissed([MissedOccurrence(identifier: identifier, due: ring.due, recorded: clock.now(), reason: reason)])
        } catch {
            logger.error("\(error)")
        }
    }

    /// The same popup, sent in place: where the server plays sounds, it plays it again.
    private func sendAgain(_ ring: inout Ring) {
        let identifier = ring.identifier
        var content = ring.content
        if content.expiry == .serverDefault { content.expiry = .never }  // as it was first sent
        let notification = render(content, for: ring.capabilities, replacesID: ring.serverID).notification
        do {
            let call = try server.beginNotify(notification)
            try call.whenAnswered { [weak self] answer in
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

    // MARK: - Stopping

    /// Stops a ring at once (the answer, a cancel, a replacement): its sound goes quiet, and the
    /// ring leaves the store, so no restart rings it again.
    func stop(_ identifier: String, because reason: String) {
        guard let ring = rings.removeValue(forKey: identifier) else { return }
        if let play = ring.play { speaker.stop(play) }
        events.ringStopped(identifier)
        forget(identifier)
        logger.info("stopped ringing: \(reason) (\(ring.plays) play(s))", metadata: ["alarm.id": "\(identifier)"])
    }

    /// Stops the ring of the alarm the server's popup `serverID` shows, if one rings.
    func stop(serverID: UInt32, because reason: String) {
        if let identifier = identifier(ringingOn: serverID) { stop(identifier, because: reason) }
    }

    /// Its ring time ended and nobody answered: recorded, and the others told (the presenter
    /// snoozes the alarm when the alarm asks for it).
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
        events.rangOut(identifier, ring.due, ring.serverID, snoozes)
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
