// Vibration and light on phones, through feedbackd (org.sigxcpu.Feedback on the session bus), as
// GNOME Clocks and Phosh's own apps give them: a ringing alarm triggers feedbackd's
// `alarm-clock-elapsed` event looping until the ring ends (a ringing timer `timeout-completed`),
// a sound played once (a timer's end that does not ring) the same event once, and a reminder or
// the notice before an alarm `message-new-instant` once.
//
// chime plays its own sound at its own volume, so feedbackd is asked for what its `quiet` profile
// gives (vibration and light: the `profile` hint); its own profile is honoured as GNOME Clocks
// honours it: `quiet` (the phone on vibrate) rings without chime's sound, `silent` without sound
// or vibration (the light alone); an alarm marked `insist` always rings and vibrates. The profile
// is read when feedbackd appears and followed through its PropertiesChanged, never waited for.
//
// Nothing here waits: each call is sent with a deadline and its answer taken when it comes;
// feedbackd absent (never started for chime: the calls do not activate it), dying (its
// feedback is triggered again when it is back, for what still rings) or hanging costs a ring its
// vibration and nothing else.
//
// Other parts may: `ring` (an alarm or timer that rings until answered), `end` (its ring ended),
// `once` (a timer's end or a reminder), and ask `soundAllowed(insist:)` before a sound plays.
import DBus
import Logging
import Timekeeping

final class Vibration: LoopPart {
    static let busName: BusName = "org.sigxcpu.Feedback"
    static let path: ObjectPath = "/org/sigxcpu/Feedback"
    static let interface: InterfaceName = "org.sigxcpu.Feedback"
    /// How long feedbackd has to answer a call (past it, the call is let go, and the ring goes on
    /// without vibration).
    static let timeout = TimeSpan.seconds(2)
    /// The application feedbackd's per-application settings know chime by.
    static let appID = "org.chime.Alarms"

    enum Kind {
        case alarm, timer, reminder

        var event: String {
            switch self {
            case .alarm: "alarm-clock-elapsed"
            case .timer: "timeout-completed"
            case .reminder: "message-new-instant"
            }
        }
    }

    private let connection: Connection
    private let clock: WallClock
    private let logger: Logger
    /// feedbackd's owner on the bus ("": not running).
    private(set) var owner = ""
    /// Its profile (`full`, `quiet`, `silent`), as last read (nil: not known).
    private(set) var profile: String?
    /// What rings, by alarm: how it was asked for, and the id
    /// feedbackd gave it (once it answered).
    private struct Feedback {
        var kind: Kind
        var insist: Bool
        var id: UInt32?
    }
    private var rings: [String: Feedback] = [:]
    /// Calls not answered yet, each with when it is let go.
    private var calls: [(call: PendingCall, member: String, until: Instant)] = []
    private var subscriptions: [SubscriptionToken] = []

    init(connection: Connection, clock: WallClock, logger: Logger) {
        self.connection = connection
        self.clock = clock
        self.logger = logger
    }

    /// The first unanswered call's deadline (the loop's own: libdbus's timeouts are not its).
    var deadline: Instant? { calls.map(\.until).min() }

    func deadlineReached(now: Instant) {
        for entry in calls where entry.until <= now {
            entry.call.cancel()
            logger.info("feedbackd did not do \(entry.member): no answer within \(Self.timeout); the ring goes on without it")
        }
        calls.removeAll { $0.until <= now }
    }

    /// Follows feedbackd: whether it runs, its profile, and the feedback it ends.
    func start() {
        do {
            subscriptions.append(try connection.watchNameOwner(Self.busName) { [unowned self] _, new in appeared(new) })
            subscriptions.append(try connection.subscribe(MatchRule(sender: Self.busName, interface: "org.freedesktop.DBus.Properties",
                                                                    member: "PropertiesChanged", path: Self.path)) { [unowned self] message in
                let arguments = message.arguments()
                guard arguments.count >= 2, arguments[0].stringValue == Self.interface.rawValue,
                      let changed = arguments[1].dictionaryEntries?.first(where: { $0.key.stringValue == "Profile" }) else { return }
                setProfile(changed.value.unwrappingVariants.stringValue)
            })
            subscriptions.append(try connection.subscribe(MatchRule(sender: Self.busName, interface: Self.interface, member: "FeedbackEnded",
                                                                    path: Self.path)) { [unowned self] message in
                guard let id = message.arguments().first?.uint32Value else { return }
                for (identifier, feedback) in rings where feedback.id == id { rings[identifier]?.id = nil }
            })
            appeared((try? connection.nameOwner(Self.busName)) ?? "")
        } catch {
            logger.info("feedbackd cannot be followed: \(error); alarms ring without vibration")
        }
    }

    /// feedbackd came, went or was replaced: its profile is read again, and what rings vibrates again.
    private func appeared(_ newOwner: String) {
        let before = owner
        owner = newOwner
        guard !newOwner.isEmpty else {
            if !before.isEmpty { logger.info("feedbackd went away; alarms ring without vibration") }
            profile = nil
            for identifier in rings.keys { rings[identifier]?.id = nil }
            return
        }
        logger.info("feedbackd is here: alarms vibrate", metadata: ["owner": "\(newOwner)"])
        send("org.freedesktop.DBus.Properties", "Get", [.string(Self.interface.rawValue), .string("Profile")]) { [weak self] reply in
            self?.setProfile(reply?.first?.unwrappingVariants.stringValue)
        }
        for (identifier, feedback) in rings { trigger(identifier, feedback.kind, insist: feedback.insist) }
    }

    private func setProfile(_ value: String?) {
        guard let value, value != profile else { return }
        profile = value
        logger.info("feedbackd's profile: \(value)")
    }

    /// Whether chime's own sound plays: not while feedbackd's profile is `quiet` or `silent` (the
    /// phone set to vibrate or to silence), unless the alarm insists.
    func soundAllowed(insist: Bool) -> Bool {
        insist || (profile != "quiet" && profile != "silent")
    }

    /// The profile feedbackd is asked for: vibration and light (`quiet`: chime plays the sound),
    /// or the light alone where the phone is silent and the alarm does not insist.
    private func hint(insist: Bool) -> String { profile == "silent" && !insist ? "silent" : "quiet" }

    /// An alarm (or timer) rings until answered: its feedback loops until `end`.
    func ring(_ identifier: String, _ kind: Kind, insist: Bool) {
        end(identifier)
        rings[identifier] = Feedback(kind: kind, insist: insist)
        trigger(identifier, kind, insist: insist)
    }

    private func trigger(_ identifier: String, _ kind: Kind, insist: Bool) {
        guard !owner.isEmpty else { return }
        send(Self.interface, "TriggerFeedback",
                        [.string(Self.appID), .string(kind.event), hints(insist: insist), .int32(0)]) { [weak self] reply in
            self?.triggered(identifier, reply?.first?.uint32Value)
        }
    }

    private func triggered(_ identifier: String, _ id: UInt32?) {
        guard let id else { return }
        guard rings[identifier] != nil else {
            // It ended before feedbackd answered.
            endFeedback(id)
            return
        }
        rings[identifier]?.id = id
    }

    /// The ring of `identifier` ended (answered, cancelled, rung out): its feedback ends.
    func end(_ identifier: String) {
        guard let feedback = rings.removeValue(forKey: identifier) else { return }
        if let id = feedback.id { endFeedback(id) }
        // (Not answered yet: `triggered` ends it when the answer comes.)
    }

    private func endFeedback(_ id: UInt32) {
        send(Self.interface, "EndFeedback", [.uint32(id)]) { _ in }
    }

    /// Feedback once: a timer's end that does not ring, a reminder, the notice before an alarm.
    func once(_ kind: Kind, insist: Bool) {
        guard !owner.isEmpty else { return }
        send(Self.interface, "TriggerFeedback", [.string(Self.appID), .string(kind.event), hints(insist: insist), .int32(-1)]) { _ in }
    }

    private func hints(insist: Bool) -> Value {
        .dictionary(key: .string, value: .variant, [.init(key: .string("profile"), value: .variant(.string(hint(insist: insist))))])
    }

    /// A call to feedbackd that never waits: `body` gets the reply's arguments (nil: an error or
    /// no answer within the timeout). It never starts feedbackd.
    @discardableResult
    private func send(_ interface: InterfaceName, _ member: MemberName, _ arguments: [Value], _ body: @escaping ([Value]?) -> Void) -> PendingCall? {
        do {
            let message = try Message.methodCall(destination: Self.busName, path: Self.path, interface: interface, member: member,
                                                 arguments: arguments)
            message.autoStart = false
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
            calls.append((call, member.rawValue, clock.now() + Self.timeout))
            try call.onCompletion { [weak self] answer in
                self?.calls.removeAll { $0.call === call }
                switch answer {
                case .success(let reply): body(reply.arguments())
                case .failure(let error):
                    self?.logger.info("feedbackd did not do \(member): \(error)")
                    body(nil)
                }
            }
            return call
        } catch {
            logger.info("feedbackd cannot be asked for \(member): \(error)")
            return nil
        }
    }
}
