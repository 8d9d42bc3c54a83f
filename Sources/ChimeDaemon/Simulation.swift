// The daemon under simulation: its real schedule, presenter, ringing and ledger over the real
// store (its SQL and schema, in SQLite's in-memory file rather than on disk: what the simulator
// checks is the daemon's logic; the real loop's tests check the files), wired as the daemon wires them
// (`SchedulerDaemon.connectCore`), driven by a simulated world instead of the poll loop's sources.
// The world holds a virtual clock, the system's time zone, the notification server (present or
// not; answering at once, slowly, refusing or never; its popups, closed or answered by the
// person), the sound, sleep, and the daemon itself killed between any two writes and started
// again on the same store. Nothing here reads the machine's clock or waits: a simulated month
// takes milliseconds, and the same steps give the same run (`chime-simulate` drives it).
//
// Of the daemon's parts, these stand in for the world (the faces in PartFaces.swift): the
// session and its client (`SimulatedServer`), the speaker, do-not-disturb (always off), the
// children (no program is run) and waking. The alarm file's follower and its reader child,
// calendars, sleep's logind and the bus are not simulated; their end-to-end tests cover them.
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What the simulated daemon said and did, as the world saw it: its signals, in order.
public enum SimulatedSignal: Equatable, Sendable, CustomStringConvertible {
    case fired(String, due: Instant, Timeliness)
    case missed(String, due: Instant)
    case rangOut(String, due: Instant, snoozed: Bool)
    case answered(String, action: String)
    case dismissed(String)
    case reminded(String, occurrence: Instant)

    public var description: String {
        switch self {
        case .fired(let id, let due, let how): "fired \(id) due \(due.seconds) \(how.rawValue)"
        case .missed(let id, let due): "missed \(id) due \(due.seconds)"
        case .rangOut(let id, let due, let snoozed): "rang out \(id) due \(due.seconds)\(snoozed ? " snoozed" : "")"
        case .answered(let id, let action): "answered \(id) \(action)"
        case .dismissed(let id): "dismissed \(id)"
        case .reminded(let id, let occurrence): "reminded \(id) of \(occurrence.seconds)"
        }
    }
}

/// Why the simulated daemon refused what it was asked.
public struct SimulationRefusal: Error, CustomStringConvertible {
    public var description: String
}

/// How the simulated notification server answers a Notify.
public enum ServerMood: String, Sendable, CaseIterable {
    /// At once (in the next turn).
    case answering
    /// After a few seconds (within the daemon's deadline).
    case slow
    /// With an error.
    case refusing
    /// Never: the daemon gives up after its deadline.
    case hanging
}

/// The world around the simulated daemon. It outlives each run of the daemon (a crash ends a run;
/// the world, the store and the screen stay).
/// One thread owns a simulation (the wall clock's closure must be Sendable).
public final class SimulatedWorld: @unchecked Sendable {
    /// The virtual wall clock.
    public private(set) var now: Instant
    /// The system's time zone (the simulator's process takes it as `TZ`).
    public private(set) var zone: String
    /// Whether a notification server owns the name.
    public private(set) var serverPresent = true
    public var serverMood = ServerMood.answering
    /// When a mood other than answering passes (a server that refuses or hangs for ever only
    /// retries every alarm for an hour and records it missed, at every step).
    public var moodUntil: Instant?
    /// Each server that comes is a new connection.
    private var serverGeneration = 1
    var serverName: String { serverPresent ? ":sim.\(serverGeneration)" : "" }
    /// The popups on screen, by id: the alarm's title.
    public private(set) var popups: [UInt32: String] = [:]
    private var nextPopupID: UInt32 = 1
    /// What the world will tell the daemon, at a time: answers to calls, the server's signals, sounds ending.
    fileprivate var news: [(at: Instant, order: Int, run: Int, deliver: () -> Void)] = []
    private var newsCount = 0
    /// Sounds playing, and when each ends by itself (nil: looping).
    fileprivate var sounds: [Int: Instant?] = [:]
    fileprivate var nextSound = 1
    /// The signals heard, in order, with when and, for `fired`, the popup just shown (the daemon
    /// records a popup as the server's answer arrives: the answer's popup is the one fired).
    public private(set) var heard: [(at: Instant, signal: SimulatedSignal, popup: UInt32?)] = []
    /// The popup the last answer placed.
    private var lastPlaced: UInt32?
    /// The daemon's run the world speaks to (each start is a new one; news for an old run is dropped).
    fileprivate(set) var run = 0
    /// Set when the daemon is killed: whatever its dying turn still does reaches nobody.
    fileprivate(set) var dead = false

    /// The machine's state directory: the store (SQLite's memory file of this name, kept open
    /// here while the daemon is down) and the firing marker.
    public let storeName: String
    private var keeper: Store.SimulatedKeeper?
    let markerFile: SimulatedFile

    /// A world whose store is the in-memory file `storeName` (unique in the process).
    public init(start: Instant, zone: String, storeName: String) throws {
        now = start
        self.zone = zone
        self.storeName = storeName
        markerFile = SimulatedFile(name: storeName + "/firing")
        keeper = try Store.SimulatedKeeper(storeName)
        setenv("TZ", zone, 1)
    }

    /// The simulation is over: the store goes (with the last connection to it).
    public func end() {
        keeper?.close()
        keeper = nil
    }

    /// Moves the clock on (only forward here: `jump` moves it either way).
    func advance(to time: Instant) { if time > now { now = time } }

    /// The wall clock is set: `by` either way.
    public func jump(by span: TimeSpan) { now = now + span }

    /// The system's zone is another one (as timedatectl re-points /etc/localtime).
    public func setZone(_ name: String) {
        zone = name
        setenv("TZ", name, 1)
    }

    fileprivate func tell(at time: Instant, _ deliver: @escaping () -> Void) {
        newsCount += 1
        news.append((time, newsCount, run, deliver))
    }

    /// The earliest news, if any.
    var nextNews: Instant? { news.filter { $0.run == run }.map(\.at).min() }

    /// Hands the daemon what is due by now, oldest first.
    func deliverNews() {
        news.removeAll { $0.run != run }
        while !dead, let index = news.indices.filter({ news[$0].at <= now }).min(by: { (news[$0].at, news[$0].order) < (news[$1].at, news[$1].order) }) {
            let item = news.remove(at: index)
            item.deliver()
        }
    }

    fileprivate func record(_ signal: SchedulerSignal, _ arguments: [Value]) {
        guard !dead else { return }
        func string(_ i: Int) -> String { arguments.count > i ? arguments[i].stringValue ?? "" : "" }
        func instant(_ i: Int) -> Instant {
            if arguments.count > i, case .int64(let seconds) = arguments[i] { return Instant(seconds: seconds) }
            return .epoch
        }
        let heard: SimulatedSignal?
        switch signal {
        case .fired: heard = .fired(string(0), due: instant(1), Timeliness(rawValue: string(2)) ?? .onTime)
        case .missed: heard = .missed(string(0), due: instant(1))
        case .rangOut:
            var snoozed = false
            if arguments.count > 2, case .boolean(let value) = arguments[2] { snoozed = value }
            heard = .rangOut(string(0), due: instant(1), snoozed: snoozed)
        case .answered: heard = .answered(string(0), action: string(1))
        case .dismissed: heard = .dismissed(string(0))
        case .reminded: heard = .reminded(string(0), occurrence: instant(1))
        default: heard = nil
        }
        if let heard {
            if case .fired = heard { self.heard.append((now, heard, lastPlaced)) } else { self.heard.append((now, heard, nil)) }
        }
    }

    // MARK: The server

    /// A server starts: the daemon hears its name change hands.
    func serverComes() {
        guard !serverPresent else { return }
        serverGeneration += 1
        serverPresent = true
    }

    /// The server leaves, taking its popups with it; calls it had not answered fail.
    func serverLeaves() {
        serverPresent = false
        popups.removeAll()
    }

    fileprivate func show(_ notification: Notification) -> UInt32 {
        let id = place(notification)
        lastPlaced = id
        return id
    }

    private func place(_ notification: Notification) -> UInt32 {
        if notification.replacesID != 0, popups[notification.replacesID] != nil {
            popups[notification.replacesID] = notification.summary
            return notification.replacesID
        }
        let id = nextPopupID
        nextPopupID += 1
        popups[id] = notification.summary
        return id
    }

    fileprivate func close(_ id: UInt32) -> Bool { popups.removeValue(forKey: id) != nil }

    /// The person took a popup away (or the server let it expire) without the daemon asking.
    func takeDown(_ id: UInt32) -> Bool { close(id) }
}

/// The notification server as the daemon's parts see it (`ServerFace`), played by the world.
final class SimulatedServer: ServerFace {
    unowned let world: SimulatedWorld
    /// Tells the daemon of the server's signals (the presenter's `handle`).
    var signal: (NotificationEvent) -> Void = { _ in }
    init(world: SimulatedWorld) { self.world = world }

    var present: Bool { world.serverPresent }
    /// The capabilities of a server that rings nothing itself: chime plays the sound.
    var capabilities: [Capability]? { world.serverPresent ? [.actions, .body, .persistence, .sound] : nil }
    var information: ServerInformation? {
        world.serverPresent ? ServerInformation(name: "simulated", vendor: "chime", version: "1", specVersion: "1.2") : nil
    }
    func ask() {}
    func markGone() {}

    func beginNotify(_ notification: Notification) throws -> any NotifyCall {
        let call = SimulatedCall()
        guard !world.dead else { return call }  // a killed daemon sends nothing
        let world = world
        let generation = world.serverName
        let answer: (Instant, () -> Result<ShownPopup, any Error>)?
        if !world.serverPresent {
            answer = (world.now, { .failure(NoNotificationServerError(underlying: DBusError(name: .serviceUnknown, message: "no owner"))) })
        } else {
            if let until = world.moodUntil, world.now >= until {
                world.serverMood = .answering
                world.moodUntil = nil
            }
            switch world.serverMood {
            case .answering:
                answer = (world.now, { world.serverName == generation ? .success(ShownPopup(id: world.show(notification), server: generation))
                    : .failure(DBusError(name: .noReply, message: "the server left")) })
            case .slow:
                answer = (world.now + .seconds(3), { world.serverName == generation ? .success(ShownPopup(id: world.show(notification), server: generation))
                    : .failure(DBusError(name: .noReply, message: "the server left")) })
            case .refusing:
                answer = (world.now, { .failure(DBusError(name: .failed, message: "refused")) })
            case .hanging:
                answer = nil
            }
        }
        if let (time, result) = answer {
            world.tell(at: time) { [weak call] in call?.answer(result()) }
        }
        return call
    }

    func requestClose(_ id: UInt32) {
        guard !world.dead, world.close(id) else { return }
        world.tell(at: world.now) { [weak self] in self?.signal(.closed(id: id, reason: .closedByCall)) }
    }
}

/// A Notify the simulated server will answer (or not).
final class SimulatedCall: NotifyCall {
    private var body: ((Result<ShownPopup, any Error>) -> Void)?
    private var cancelled = false
    func whenAnswered(_ body: @escaping (Result<ShownPopup, any Error>) -> Void) throws { self.body = body }
    func cancel() { cancelled = true }
    func answer(_ result: Result<ShownPopup, any Error>) {
        guard !cancelled else { return }
        body?(result)
    }
}

/// The sound: plays that end by themselves after a few seconds, or loop until stopped.
final class SimulatedSound: SoundFace {
    unowned let world: SimulatedWorld
    var ended: (Int) -> Void = { _ in }
    init(world: SimulatedWorld) { self.world = world }
    var playsItself: Bool { true }
    func play(_ request: SoundRequest) -> Int {
        let id = world.nextSound
        world.nextSound += 1
        let end: Instant? = request.looping ? nil : world.now + .seconds(2)
        world.sounds[id] = end
        if let end { world.tell(at: end) { [weak self] in if self?.world.sounds.removeValue(forKey: id) != nil { self?.ended(id) } } }
        return id
    }
    func stop(_ id: Int) { world.sounds[id] = nil }
}

/// Do-not-disturb off; no program runs; nothing keeps the machine awake.
final class SimulatedQuiet: DoNotDisturbFace, ProgramStarter, AwakeFace {
    var current: DoNotDisturbState { DoNotDisturbState(on: false, description: "simulated") }
    func serverChanged() {}
    func start(_ arguments: [String], captureOutput: Bool, outputLimit: Int, timeLimit: TimeSpan,
               ended: @escaping (Child) -> Void) throws(SpawnError) -> pid_t {
        throw SpawnError(description: arguments.first ?? "", reason: "no program runs in the simulation")
    }
    func keepAwake(for identifier: String, content: NotificationContent) {}
    func release(_ identifier: String) {}
}

/// One run of the daemon (from its start to its stop or its death) in a simulated world.
public final class SimulatedDaemon {
    public let world: SimulatedWorld
    let store: Store
    let marker: FiringMarker
    let schedule: Schedule
    let presenter: Presenter
    let ringing: Ringing
    let ledger: PopupLedger
    let server: SimulatedServer
    let sound: SimulatedSound
    let quiet = SimulatedQuiet()
    /// The commits left before the process is killed (nil: none planned).
    private var commitsLeft: Int?
    /// The parts, in the order the loop serves their deadlines.
    private var parts: [any LoopPart] { [ringing, ledger, schedule, presenter] }

    /// Starts the daemon on the world's store, as `chime daemon` starts.
    public init(world: SimulatedWorld) throws {
        self.world = world
        world.run += 1
        world.dead = false
        var logger = Logger(label: "chime.simulated")
        logger.logLevel = .critical
        let clock = WallClock { [unowned world] in world.now }
        store = try Store(simulated: world.storeName)
        marker = FiringMarker(simulated: world.markerFile)
        let signals = SchedulerSignals(emit: { [unowned world] signal, arguments in world.record(signal, arguments) })
        server = SimulatedServer(world: world)
        sound = SimulatedSound(world: world)
        schedule = Schedule(store: store, marker: marker, signals: signals, clock: clock, logger: logger)
        ledger = PopupLedger(connection: nil, store: store, session: server, clock: clock, logger: logger)
        ringing = Ringing(store: store, speaker: sound, ledger: ledger, server: server, clock: clock, logger: logger)
        presenter = Presenter(store: store, schedule: schedule, session: server, doNotDisturb: quiet, children: quiet, ringing: ringing,
                              waking: quiet, ledger: ledger, signals: signals, clock: clock, logger: logger)
        SchedulerDaemon.connectCore(schedule: schedule, presenter: presenter, ringing: ringing, ledger: ledger, alarmsRemoved: {})
        sound.ended = { [unowned ringing] play in ringing.soundEnded(play) }
        server.signal = { [unowned presenter] event in presenter.handle(event) }
        store.database.refusingCommits { [unowned self] in
            guard let left = commitsLeft, !countingPaused else { return false }
            if left <= 0 { die(); return true }
            commitsLeft = left - 1
            return false
        }
        // As `run()` begins.
        ledger.forgetLeftServers(current: world.serverPresent ? world.serverName : nil)
        schedule.chargeCrash()
        schedule.loadDaysOff()
        try schedule.catchUp(now: world.now)
        try presenter.restore()
        ringing.resume()
        schedule.announceChanges()
    }

    /// Whether this run is over (killed).
    public var dead: Bool { world.dead && world.run == currentRun }
    private lazy var currentRun = world.run

    /// The process is killed: from here nothing it does reaches the disk, the marker or the world.
    public func die() {
        _ = currentRun
        world.dead = true
        marker.frozen = true
        commitsLeft = 0
    }

    /// What the kernel does when the process is gone: its connection to the store closes (before
    /// the next run opens its own; two connections of one process share its file locks).
    public func buried() {
        precondition(world.dead, "only a killed daemon is buried")
        store.database.close()
    }

    /// The run is over (the simulation ends): its connection to the store closes.
    public func stopped() {
        world.dead = true
        store.database.close()
    }

    /// Kills the daemon just before its `count`-th commit from now (0: the next one).
    public func dieBeforeCommit(_ count: Int) { commitsLeft = count }

    /// While set, commits are not counted towards a planned death (a call whose answer the
    /// simulator needs to know took effect).
    public var countingPaused = false

    /// The earliest time the daemon or the world has something to do.
    public var nextEvent: Instant? {
        ([world.nextNews] + parts.map(\.deadline)).compactMap { $0 }.min()
    }

    /// Runs the daemon's turns until `time` (each part's deadline, each piece of news, in order),
    /// then leaves the clock at `time`. False: it did not settle (a turn that keeps coming due).
    @discardableResult
    public func run(until time: Instant) -> Bool {
        var turns = 0
        while !world.dead {
            guard let next = nextEvent, next <= time else { break }
            turns += 1
            if turns > 100_000 { return false }
            world.advance(to: next)
            turn()
        }
        // A daemon killed meanwhile leaves the clock where it died.
        if !world.dead { world.advance(to: time) }
        return true
    }

    /// One turn of the loop at the world's now: news first (the bus), then every part whose deadline came.
    func turn() {
        world.deliverNews()
        for part in parts where !world.dead {
            if let due = part.deadline, due <= world.now { part.deadlineReached(now: world.now) }
        }
        if !world.dead {
            schedule.announceChanges()
            _ = ringing.takeChange()
        }
    }

    // MARK: - What the person and the world do

    /// `Add`, as the D-Bus door takes it: the identifier, or why it was refused.
    public func add(_ entries: [(String, Value)]) throws -> (identifier: String, next: Instant) {
        let incoming = try NotificationRequest.fromDBus(entries.map { Value.DictionaryEntry(key: .string($0.0), value: .variant($0.1)) },
                                                        now: world.now)
        do throws(SchedulerError) {
            let added = try schedule.add(incoming)
            return (added.identifier, added.next)
        } catch {
            throw SimulationRefusal(description: "\(error)")
        }
    }

    /// `Remove`: as the D-Bus door, the popups and the ring go too.
    public func remove(_ identifier: String) -> Bool {
        do {
            _ = try schedule.remove([identifier])
            return true
        } catch {
            return false
        }
    }

    /// `SkipOccurrence`.
    public func skip(_ identifier: String, occurrence: Instant) -> Bool {
        (try? schedule.skip(identifier, occurrence: occurrence, undo: false)) != nil
    }

    /// `SetAway` for every alarm.
    public func setAway(from: Instant, until: Instant) -> Bool {
        (try? schedule.setAway(DaysOff.Away(from: from, until: until))) != nil
    }

    /// The alarm file's days off (its holiday calendars), as its reading gives them.
    public func setHolidays(_ days: [Int64: String]) {
        schedule.setFileDaysOff(DaysOff(holidays: days), now: world.now)
    }

    /// The person presses a popup's button.
    public func press(_ popup: UInt32, _ key: String) {
        guard world.popups[popup] != nil else { return }
        presenter.handle(.actionInvoked(id: popup, key: key))
    }

    /// The person closes a popup (or the server lets it expire).
    public func closePopup(_ popup: UInt32, expired: Bool = false) {
        guard world.takeDown(popup) else { return }
        presenter.handle(.closed(id: popup, reason: expired ? .expired : .dismissed))
    }

    /// A calendar's reading says these alarms were acknowledged on another machine up to a time.
    public func answeredElsewhere(_ identifier: String, acknowledged: Instant) {
        presenter.answeredElsewhere([identifier: acknowledged])
    }

    /// The server comes or goes (the bus's NameOwnerChanged).
    public func serverComes() {
        guard !world.serverPresent else { return }
        world.serverComes()
        presenter.serverOwnerChanged(from: "", to: world.serverName)
    }

    public func serverLeaves() {
        guard world.serverPresent else { return }
        let old = world.serverName
        world.serverLeaves()
        presenter.serverOwnerChanged(from: old, to: "")
    }

    /// logind's PrepareForSleep(true): the machine sleeps until `resume`.
    public func sleepStarting() { schedule.sleepStarting() }

    /// The machine resumed: the wall-clock timer fires at once (a turn of the loop), before
    /// logind's PrepareForSleep(false) comes, as on a real machine.
    public func resuming() { turn() }

    /// PrepareForSleep(false), as the daemon wires it.
    public func resumed() {
        schedule.awoke()
        schedule.rescheduleAll(after: world.now)
        schedule.catchUpHeld(now: world.now, timeliness: .late)
    }

    /// The wall clock was set (the timer's cancel-on-set), or the zone changed: every alarm re-planned.
    public func clockChanged() { schedule.rescheduleAll(after: world.now) }

    // MARK: - What `chime list` would say

    /// Each pending alarm's next time (nil: none left), as `ListPending` says.
    public func pending() -> [String: Instant?] { listing().pending }

    /// What the simulator reads of the store after every step, kept until the store changes (the
    /// rows this run's connection changed: the only one that writes).
    private var readAt: Int64 = -1
    private var keptListing: (pending: [String: Instant?], quarantined: Set<String>)?
    private var keptDetached: [(identifier: String, due: Instant)]?
    private var keptMissed: [(identifier: String, due: Instant)]?
    private func forgetIfChanged() {
        let changes = store.database.totalChanges
        guard changes != readAt else { return }
        readAt = changes
        keptListing = nil
        keptDetached = nil
        keptMissed = nil
    }

    /// What `ListPending` says, and which alarms are left out (quarantined), in one reading.
    public func listing() -> (pending: [String: Instant?], quarantined: Set<String>) {
        forgetIfChanged()
        if let keptListing { return keptListing }
        var pending: [String: Instant?] = [:]
        var quarantined: Set<String> = []
        for time in (try? store.scheduledTimes()) ?? [] {
            pending[time.identifier] = .some(time.nextFire)
            if time.quarantine != nil { quarantined.insert(time.identifier) }
        }
        keptListing = (pending, quarantined)
        return (pending, quarantined)
    }

    /// The alarms left out after the daemon stopped twice while working on them (`chime status` says so).
    public func quarantined() -> Set<String> {
        Set(((try? store.scheduledTimes()) ?? []).filter { $0.quarantine != nil }.map(\.identifier))
    }

    /// How the store holds an alarm (for a failure's message).
    public func stored(_ identifier: String) -> String {
        guard let time = try? store.scheduledTime(of: identifier) else { return "not stored" }
        return "next \(time.nextFire.map { "\($0.seconds)" } ?? "none"), last fired \(time.lastFired.map { "\($0.seconds)" } ?? "none")"
            + (time.quarantine.map { ", quarantined: \($0)" } ?? "") + (time.disabled ? ", off" : "") + (time.paused ? ", paused" : "")
            + ", held or retrying: \(detached().filter { $0.identifier == identifier }.map(\.due.seconds))"
    }

    /// The alarms ringing now.
    public var ringingNow: [String] { ringing.current.map(\.identifier) }

    /// The occurrence each alarm ringing now rings for.
    public var ringingDue: [String: Instant] {
        Dictionary(ringing.current.map { ($0.identifier, $0.due) }, uniquingKeysWith: max)
    }

    /// Occurrences held for a server or waiting to be tried again.
    public func detached() -> [(identifier: String, due: Instant)] {
        forgetIfChanged()
        if let keptDetached { return keptDetached }
        let detached = ((try? store.held()) ?? []) + ((try? store.retrying()) ?? []).map { ($0.identifier, $0.due) }
        keptDetached = detached
        return detached
    }

    /// Occurrences recorded as missed.
    public func missed() -> [(identifier: String, due: Instant)] {
        forgetIfChanged()
        if let keptMissed { return keptMissed }
        let missed = ((try? store.missedOccurrences()) ?? []).map { ($0.identifier, $0.due) }
        keptMissed = missed
        return missed
    }

    /// Which alarm each popup on screen is (from the ledger).
    public func delivered() -> [(identifier: String, popup: UInt32)] {
        ((try? ledger.popups()) ?? []).map { ($0.identifier, $0.serverID) }
    }

    /// Whether an occurrence is on its way to the screen now.
    public func inFlight(_ identifier: String, due: Instant) -> Bool { presenter.isInFlight(identifier, due: due) }
}
