// Do-not-disturb, read from the running notification server where it tells (no server announces it
// through the notification spec: each has its own way), and each alarm's policy while it is on:
//  - break-through (the default): sent as critical, which GNOME Shell's message tray lets through
//    with banners off and Plasma shows by default; swaync and mako decide by their configuration;
//    dunst 1.9 holds every popup while paused, critical ones too, so there the sound (chime plays
//    it: dunst plays none) rings and the popup shows at resume;
//  - defer: held (durably, like an alarm waiting for a server) until do-not-disturb ends, then
//    shown marked "Late: due at 07:00";
//  - silent: recorded as delivered (`chime delivered`), no popup, no sound.
//
// Nothing here waits. The state is read when the server says who it is and again whenever it
// announces a change (dunst's and Plasma's PropertiesChanged, swaync's Subscribe signals; mako's,
// where a newer mako announces its Modes); each read is pending calls (or, for GNOME Shell's
// `show-banners`, a `gsettings` child whose output the loop reads) with a deadline, after which
// the server "did not answer". Servers that announce nothing (GNOME, mako 1.7) are read again
// `prefetch` before each alarm is due, so an alarm uses a state read a moment ago without waiting
// for it, and every `recheck` while an alarm is deferred. The compatibility matrix (make
// test-desktops) switches each server's own do-not-disturb and measures how soon a deferred alarm
// comes.
//
// Other parts may: read `current` and `announces`; `refresh(then:)` for a fresh state (Status,
// Settings); `expectAlarm(at:)` so the state is fresh when it is due; `recheck(_:)` while alarms
// are deferred; `serverChanged()` when the server changes hands. The part tells the others
// (`events.read`) after every read.
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What the server says of its do-not-disturb.
struct DoNotDisturbState: Equatable {
    /// nil: this server does not say (or could not be asked).
    var on: Bool?
    /// "dunst is paused", "Plasma's do-not-disturb is on", "the server does not say".
    var description: String
}

/// What to do with an alarm due while do-not-disturb is on (nil: show it as it is).
enum DoNotDisturbAction: Equatable { case show(urgency: Urgency), hold, silence }

extension NotificationContent {
    /// What its do-not-disturb policy says to do while the server's do-not-disturb is `state`.
    func doNotDisturbAction(_ state: DoNotDisturbState) -> DoNotDisturbAction? {
        let policy = doNotDisturb ?? .breakThrough
        // A critical alarm that breaks through needs no question asked.
        if policy == .breakThrough, urgency == .critical { return nil }
        guard state.on == true else { return nil }
        switch policy {
        case .breakThrough: return .show(urgency: .critical)
        case .defer: return .hold
        case .silent: return .silence
        }
    }
}

final class DoNotDisturb: LoopPart {
    /// How long a read of the server's state may take before it counts as "does not say".
    static let timeout = TimeSpan.milliseconds(1000)
    /// How often a deferred alarm's server is asked again.
    static let recheckEvery = TimeSpan.seconds(30)
    /// How long before an alarm is due a server that announces nothing is read.
    static let prefetch = TimeSpan.milliseconds(1500)

    private let connection: Connection
    private let session: any ServerFace
    private let children: any ProgramRunner
    private let clock: WallClock
    private let logger: Logger
    private var subscriptions: [SubscriptionToken] = []

    /// What do-not-disturb tells the other parts (wired by the daemon).
    struct Events {
        /// After every read, with what it found.
        var read: (DoNotDisturbState) -> Void = { _ in }
    }
    var events = Events()

    /// The state as last read (nil: not read since the server came).
    private(set) var state: DoNotDisturbState?
    /// When the last read started, and when it ended.
    private var lastStarted: Instant?
    private var lastRead: Instant?
    /// The read in flight.
    private var reading: Reading?
    /// The next alarm, so a state read a moment before it is there when it is due.
    private var expected: Instant?
    /// Whether alarms wait for do-not-disturb to end (read again every `recheckEvery`).
    private var rechecking = false

    private final class Reading {
        let deadline: Instant
        var calls: [PendingCall] = []
        var child: pid_t?
        var waiters: [(DoNotDisturbState) -> Void] = []
        /// Known before any answer (no server, a server that does not say): ended at the next turn.
        var settled: DoNotDisturbState?
        init(deadline: Instant) { self.deadline = deadline }
    }

    init(connection: Connection, session: any ServerFace, children: any ProgramRunner, clock: WallClock, logger: Logger) {
        self.connection = connection
        self.session = session
        self.children = children
        self.clock = clock
        self.logger = logger
    }

    /// The state as best known now, without waiting.
    var current: DoNotDisturbState {
        if !session.present { return DoNotDisturbState(on: nil, description: "no notification server") }
        return state ?? DoNotDisturbState(on: nil, description: "not read yet")
    }

    /// Whether the running server announces a change of its do-not-disturb (dunst and Plasma through
    /// PropertiesChanged, swaync through its Subscribe signals).
    var announces: Bool {
        switch ServerWays.Known(rawValue: session.information?.name ?? "") {
        case .dunst?, .plasma?, .swaync?: true
        default: false
        }
    }

    /// Reads the state afresh (unless the server announces its changes and it is known) and calls
    /// `body` with it once read, or once the server has not answered within `timeout`.
    func refresh(then body: @escaping (DoNotDisturbState) -> Void = { _ in }) {
        if let state, announces, reading == nil { return body(state) }
        startReading().waiters.append(body)
    }

    /// The next alarm is due at `time` (nil: none).
    func expectAlarm(at time: Instant?) { expected = time }

    /// Whether alarms are deferred until do-not-disturb ends.
    func recheck(_ on: Bool) { rechecking = on }

    /// The server changed hands: what was read of the old one is void.
    func serverChanged() {
        state = nil
        if let reading { finish(reading, DoNotDisturbState(on: nil, description: "the server changed while it was read")) }
    }

    /// Follows the server's announcements of a change (subscribed once; the signals are believed
    /// only from the server's current owner).
    func follow() throws {
        // dunst announces every property (how many popups it shows, too): only these matter.
        let properties: Set<String> = ["paused", "pauseLevel", "Inhibited", "Modes"]
        let propertiesChanged: (Message) -> Void = { [weak self] message in
            let arguments = message.arguments()
            guard arguments.count == 3 else { return }
            let changed = (arguments[1].dictionaryEntries ?? []).compactMap(\.key.stringValue)
            let invalidated = arguments[2].arrayElements?.compactMap(\Value.stringValue) ?? []
            if !properties.isDisjoint(with: changed + invalidated) { self?.refreshAfterAnnouncement() }
        }
        for path: ObjectPath in [NotificationClient.objectPath, "/fr/emersion/Mako"] {
            subscriptions.append(try connection.subscribe(
                MatchRule(sender: NotificationClient.busName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                          path: path), handler: propertiesChanged))
        }
        let changed: (Message) -> Void = { [weak self] _ in self?.refreshAfterAnnouncement() }
        for member: MemberName in ["Subscribe", "SubscribeV2"] {
            subscriptions.append(try connection.subscribe(
                MatchRule(sender: "org.erikreider.swaync.cc", interface: "org.erikreider.swaync.cc", member: member,
                          path: "/org/erikreider/swaync/cc"), handler: changed))
        }
    }

    /// The server announced a change: read again, even when a read is in flight (it may have
    /// started before the change).
    private func refreshAfterAnnouncement() {
        if let reading { finish(reading, nil) }
        _ = startReading()
    }

    // MARK: - The loop

    /// When to read before the next alarm: servers that announce nothing, or a state never read.
    private var prefetchAt: Instant? {
        guard let expected, session.present, !(announces && state != nil) else { return nil }
        let at = expected - Self.prefetch
        if let lastStarted, lastStarted >= at { return nil }
        return at
    }

    private var recheckAt: Instant? {
        guard rechecking else { return nil }
        return (lastRead ?? clock.now()) + Self.recheckEvery
    }

    var deadline: Instant? {
        if let reading { return reading.settled != nil ? .earliest : reading.deadline }
        return [prefetchAt, recheckAt].compactMap { $0 }.min()
    }

    func deadlineReached(now: Instant) {
        if let reading {
            if let settled = reading.settled { return finish(reading, settled) }
            if reading.deadline <= now { finish(reading, DoNotDisturbState(on: nil, description: didNotAnswer)) }
            return
        }
        if let at = prefetchAt, at <= now { _ = startReading() } else if let at = recheckAt, at <= now { _ = startReading() }
    }

    // MARK: - Reading

    private var serverName: String { session.information?.name ?? "" }

    private var didNotAnswer: String {
        ServerWays.Known(rawValue: serverName) == .gnomeShell
            ? "GNOME Shell's show-banners could not be read (gsettings)" : "\(serverName) did not answer when asked"
    }

    /// The read in flight, or a new one.
    private func startReading() -> Reading {
        if let reading { return reading }
        let reading = Reading(deadline: clock.now() + Self.timeout)
        self.reading = reading
        lastStarted = clock.now()
        guard session.present else {
            finishSoon(reading, DoNotDisturbState(on: nil, description: "no notification server"))
            return reading
        }
        // The server's name, as asked (without waiting) when it appeared: a server that does not
        // answer GetServerInformation is asked nothing else.
        guard let name = session.information?.name else {
            session.ask()
            finishSoon(reading, DoNotDisturbState(on: nil, description: "the server has not said who it is"))
            return reading
        }
        switch ServerWays.Known(rawValue: name) {
        case .dunst?:
            property(reading, NotificationClient.objectPath, "org.dunstproject.cmd0", "paused") { [unowned self] paused in
                guard case .boolean(let paused)? = paused else { return self.unanswered(reading) }
                guard paused else { return self.finish(reading, DoNotDisturbState(on: false, description: "dunst is not paused")) }
                self.property(reading, NotificationClient.objectPath, "org.dunstproject.cmd0", "pauseLevel") { level in
                    let text = if case .uint32(let level)? = level { "dunst is paused (pause level \(level))" } else { "dunst is paused" }
                    self.finish(reading, DoNotDisturbState(on: true, description: text))
                }
            }
        case .plasma?:
            property(reading, NotificationClient.objectPath, "org.freedesktop.Notifications", "Inhibited") { [unowned self] value in
                guard case .boolean(let inhibited)? = value else { return self.unanswered(reading) }
                self.finish(reading, DoNotDisturbState(on: inhibited, description: "Plasma's do-not-disturb is \(inhibited ? "on" : "off")"))
            }
        case .swaync?:
            call(reading, "org.erikreider.swaync.cc", "/org/erikreider/swaync/cc", "org.erikreider.swaync.cc", "GetDnd") { [unowned self] reply in
                guard case .boolean(let on)? = reply?.first else { return self.unanswered(reading) }
                self.finish(reading, DoNotDisturbState(on: on, description: "swaync's do-not-disturb is \(on ? "on" : "off")"))
            }
        case .mako?:
            // A newer mako has a Modes property (and announces it); mako 1.7 only ListModes.
            property(reading, "/fr/emersion/Mako", "fr.emersion.Mako", "Modes") { [unowned self] value in
                if let modes = value?.arrayElements?.compactMap(\Value.stringValue) { return self.finish(reading, Self.mako(modes)) }
                self.call(reading, NotificationClient.busName, "/fr/emersion/Mako", "fr.emersion.Mako", "ListModes") { reply in
                    guard let modes = reply?.first?.arrayElements?.compactMap(\Value.stringValue) else { return self.unanswered(reading) }
                    self.finish(reading, Self.mako(modes))
                }
            }
        case .gnomeShell?:
            readGSettings(reading, "org.gnome.desktop.notifications", "show-banners")
        default:
            finishSoon(reading, DoNotDisturbState(on: nil, description: name.isEmpty ? "the server does not say" : "\(name) does not say"))
        }
        return reading
    }

    private static func mako(_ modes: [String]) -> DoNotDisturbState {
        let on = modes.contains("do-not-disturb")
        return DoNotDisturbState(on: on, description: "mako's do-not-disturb mode is \(on ? "on" : "off") (modes: \(modes.joined(separator: ", ")))")
    }

    private func unanswered(_ reading: Reading) {
        finish(reading, DoNotDisturbState(on: nil, description: didNotAnswer))
    }

    /// `gsettings get SCHEMA KEY` for GNOME's boolean, as a child the loop reads.
    private func readGSettings(_ reading: Reading, _ schema: String, _ key: String) {
        do throws(SpawnError) {
            reading.child = try children.start(["gsettings", "get", schema, key], captureOutput: true, outputLimit: 64,
                                               timeLimit: Self.timeout) { [weak self, weak reading] child in
                guard let self, let reading else { return }
                let text = String(decoding: child.collected, as: UTF8.self).trimmingWhitespace()
                guard child.succeeded, text == "true" || text == "false" else { return self.unanswered(reading) }
                let banners = text == "true"
                self.finish(reading, DoNotDisturbState(on: !banners,
                                                       description: "GNOME's do-not-disturb is \(banners ? "off" : "on") (show-banners \(banners))"))
            }
        } catch {
            finishSoon(reading, DoNotDisturbState(on: nil, description: "GNOME Shell's show-banners could not be read (\(error.reason))"))
        }
    }

    private func property(_ reading: Reading, _ path: ObjectPath, _ interface: String, _ name: String,
                          _ body: @escaping (Value?) -> Void) {
        call(reading, NotificationClient.busName, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]) {
            body($0?.first?.unwrappingVariants)
        }
    }

    /// A pending call for `reading`: `body` gets the reply's arguments (nil: an error), unless the
    /// read ended meanwhile.
    private func call(_ reading: Reading, _ destination: BusName, _ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName,
                      _ arguments: [Value] = [], _ body: @escaping ([Value]?) -> Void) {
        do {
            let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member,
                                                 arguments: arguments)
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
            reading.calls.append(call)
            try call.onCompletion { [weak self, weak reading] answer in
                guard let self, let reading, self.reading === reading else { return }
                body(try? answer.get().arguments())
            }
        } catch {
            finishSoon(reading, DoNotDisturbState(on: nil, description: didNotAnswer))
        }
    }

    /// Ends a read that could not start at the loop's next turn, so whoever asked has its callback
    /// in place first.
    private func finishSoon(_ reading: Reading, _ state: DoNotDisturbState) {
        reading.settled = state
    }

    /// Ends `reading` with `state` (nil: abandoned, nothing learnt) and tells whoever waited.
    private func finish(_ reading: Reading, _ state: DoNotDisturbState?) {
        guard self.reading === reading else { return }
        self.reading = nil
        for call in reading.calls where !call.isCompleted { call.cancel() }
        if let pid = reading.child { children.stop(pid) }
        guard let state else { return }
        if state != self.state { logger.info("do-not-disturb: \(state.description)") }
        self.state = state
        lastRead = clock.now()
        events.read(state)
        for waiter in reading.waiters { waiter(state) }
    }

    // MARK: - Status

    /// What `chime status` says of do-not-disturb, given how many alarms are deferred.
    func statusText(_ state: DoNotDisturbState, deferred: Int) -> String {
        guard state.on == true else {
            return state.on == false ? "off (\(state.description))" : "unknown: \(state.description)"
        }
        var text = "on (\(state.description)): alarms break through as critical"
        if ServerWays.Known(rawValue: serverName) == .dunst {
            text += " (dunst holds even those until it resumes; chime still plays their sound)"
        }
        text += ", --dnd defer ones wait until it ends, --dnd silent ones are only recorded"
        if deferred > 0 { text += "; \(deferred) alarm(s) deferred" }
        return text
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
