// Follows systemd-logind's PrepareForSleep on the system bus. While the daemon runs it holds a
// *delay* inhibitor lock ("recording alarms before sleep"): when logind announces a sleep, the
// daemon makes its store durable and only then lets go of the lock, so the machine never sleeps
// with an acknowledged change only in the page cache; at resume it takes the lock again and catches
// up what fell due during the sleep. No system bus, or no logind on it, is not an error: the kernel
// still reports the resume to the daemon's timer as a change of the wall clock.
//
// Nothing here waits: each Inhibit is a pending call on the system bus connection (which the
// loop polls), with a deadline; a logind that never answers holds up no alarm.
//
// Being the daemon's system bus, it also asks hostnamed once what kind of machine this is
// (`askChassis`, Chassis.swift), with the same deadline.
//
// Other parts may: `holdBlock(_:)` a block lock for a reason (nil: let go), `askChassis`, read
// `following`, `blockReason` and `blockRefusal`. The part tells the others (`events`) before a sleep and after the resume.
import DBus
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

final class SleepFollower: LoopPart {
    static let login1: BusName = "org.freedesktop.login1"
    static let managerPath: ObjectPath = "/org/freedesktop/login1"
    static let manager: InterfaceName = "org.freedesktop.login1.Manager"
    /// How long logind may take to answer Inhibit.
    static let timeout = TimeSpan.seconds(5)

    private(set) var connection: Connection?
    private let clock: WallClock
    private let logger: Logger
    private var subscription: SubscriptionToken?
    /// The delay lock's descriptor; -1 while none is held.
    private(set) var inhibitor: Int32 = -1
    /// Whether logind answered: the daemon follows sleep (for chime status).
    private(set) var following = false
    /// What the sleep follower tells the other parts (wired by the daemon).
    struct Events {
        /// The machine is about to sleep.
        var sleeping: () -> Void = {}
        /// The machine woke up.
        var resumed: () -> Void = {}
    }
    var events = Events()

    /// What `chime status` says of sleep (`sleep`: nil where there is no system bus).
    static func status(_ sleep: SleepFollower?) -> String {
        guard let sleep, sleep.connection != nil else {
            return "not followed: no system bus; what falls due during a sleep is still caught up at resume (the clock tells)"
        }
        return sleep.following
            ? "followed: logind's delay lock is held, let go once the alarms are on disk"
            : "not followed: logind gives no sleep lock; what falls due during a sleep is still caught up at resume (the clock tells)"
    }

    /// The *block* lock held for an alarm that must not be slept through (nil: none).
    private(set) var blockReason: String?
    private var blockLock: Int32 = -1
    /// Why logind refused the block lock last time it was asked (nil: it did not).
    private(set) var blockRefusal: String?
    private var refusedReason: String?
    /// The reason a block lock is wanted for now (nil: none).
    private var wantedReason: String?

    /// The Inhibit calls in flight, each with when it is given up.
    private var delayCall: (call: PendingCall, deadline: Instant)?
    private var blockCall: (call: PendingCall, reason: String, deadline: Instant)?
    private var chassisCall: (call: PendingCall, answered: (String?) -> Void, deadline: Instant)?

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the default), or nil when there is none.
    init?(clock: WallClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
        do {
            connection = try Connection(.system)
        } catch {
            logger.info("no system bus (\(error)); sleep is seen only through the clock")
            return nil
        }
    }

    deinit {
        if inhibitor >= 0 { try? Sys.close(inhibitor) }
        if blockLock >= 0 { try? Sys.close(blockLock) }
    }

    /// Closes a lock's descriptor: logind lets the lock go when the last copy is closed.
    private func letGo(_ fd: Int32) {
        do { try Sys.close(fd) } catch { logger.warning("letting go of a logind lock: \(error)") }
    }

    /// Subscribes to PrepareForSleep and asks for the delay lock.
    func start() {
        guard let connection else { return }
        do {
            subscription = try connection.subscribe(
                MatchRule(sender: Self.login1, interface: Self.manager, member: "PrepareForSleep", path: Self.managerPath)
            ) { [weak self] message in
                guard let self, case .boolean(let starting)? = message.arguments().first else { return }
                self.prepareForSleep(starting)
            }
            takeInhibitor()
        } catch {
            logger.info("cannot follow logind's sleep signal (\(error)); sleep is seen only through the clock")
        }
    }

    private func prepareForSleep(_ starting: Bool) {
        if starting {
            logger.info("the machine is going to sleep")
            events.sleeping()
            releaseInhibitor()
        } else {
            logger.info("the machine woke up")
            // What fell due first: taking the lock again is a round trip to logind.
            events.resumed()
            takeInhibitor()
        }
    }

    /// `Inhibit("sleep", "chime", …, "delay")`: the lock lasts as long as the descriptor is open.
    func takeInhibitor() {
        guard inhibitor < 0, delayCall == nil else { return }
        do {
            let call = try inhibit(why: "recording alarms before sleep", mode: "delay") { [weak self] result in
                guard let self else { return }
                self.delayCall = nil
                switch result {
                case .success(let fd):
                    self.inhibitor = fd
                    self.following = true
                case .failure(let error):
                    self.logger.info("logind gives no sleep lock (\(error)); sleep is seen only through the clock")
                }
            }
            delayCall = (call, clock.now() + Self.timeout)
        } catch {
            logger.info("logind gives no sleep lock (\(error)); sleep is seen only through the clock")
        }
    }

    func releaseInhibitor() {
        delayCall?.call.cancel()
        delayCall = nil
        guard inhibitor >= 0 else { return }
        letGo(inhibitor)
        inhibitor = -1
    }

    /// Holds a block lock with this reason ("alarm “Get up” at 07:00"), or lets go of it (nil).
    /// A lock for a new reason is taken before the old one is let go: no gap.
    func holdBlock(_ reason: String?) {
        wantedReason = reason
        reconcileBlock()
    }

    private func reconcileBlock() {
        // Asked again only when the reason changes: a refusal is not retried on every turn of the loop.
        guard blockCall == nil, wantedReason != blockReason else { return }
        guard let reason = wantedReason else {
            if blockLock >= 0 { letGo(blockLock) }
            blockLock = -1
            blockReason = nil
            return
        }
        guard reason != refusedReason else { return }
        do {
            let call = try inhibit(why: reason, mode: "block") { [weak self] result in
                guard let self else { return }
                self.blockCall = nil
                switch result {
                case .success(let fd):
                    let old = self.blockLock
                    self.blockLock = fd
                    self.blockReason = reason
                    self.blockRefusal = nil
                    self.refusedReason = nil
                    self.logger.info("keeping the machine awake: \(reason)")
                    if old >= 0 { letGo(old) }
                case .failure(let error):
                    self.refused(reason, "\(error)")
                }
                self.reconcileBlock()
            }
            blockCall = (call, reason, clock.now() + Self.timeout)
        } catch {
            refused(reason, "\(error)")
        }
    }

    private func refused(_ reason: String, _ why: String) {
        blockRefusal = why
        refusedReason = reason
        // The old lock was for another reason: it is let go.
        if blockLock >= 0 { letGo(blockLock) }
        blockLock = -1
        blockReason = nil
        logger.warning("logind refused a lock to keep the machine awake for \(reason): \(why)")
    }

    /// hostnamed's `Chassis` ("handset", "laptop", ...), to `answered` (nil: no hostnamed
    /// answered, within `timeout`). hostnamed is started by the bus if it is not running.
    func askChassis(_ answered: @escaping (String?) -> Void) {
        guard let connection else { return answered(nil) }
        do {
            let message = try Message.methodCall(destination: "org.freedesktop.hostname1", path: "/org/freedesktop/hostname1",
                                                 interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                 arguments: [.string("org.freedesktop.hostname1"), .string("Chassis")])
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
            try call.onCompletion { [weak self] answer in
                guard let self, let pending = self.chassisCall else { return }
                self.chassisCall = nil
                do {
                    guard case .variant(let value)? = try answer.get().arguments().first, let chassis = value.stringValue else {
                        throw DaemonError("hostnamed answered Get(Chassis) without a string")
                    }
                    pending.answered(chassis)
                } catch {
                    self.logger.info("hostnamed does not say the chassis (\(error))")
                    pending.answered(nil)
                }
            }
            chassisCall = (call, answered, clock.now() + Self.timeout)
        } catch {
            logger.info("cannot ask hostnamed the chassis (\(error))")
            answered(nil)
        }
    }

    private func inhibit(why: String, mode: String, answered: @escaping (Result<Int32, any Error>) -> Void) throws -> PendingCall {
        guard let connection else { throw DaemonError("no system bus") }
        let message = try Message.methodCall(destination: Self.login1, path: Self.managerPath, interface: Self.manager, member: "Inhibit",
                                             arguments: [.string("sleep"), .string("chime"), .string(why), .string(mode)])
        let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
        try call.onCompletion { answer in
            answered(Result {
                guard case .unixFD(let fd)? = try answer.get().arguments().first, fd >= 0 else {
                    throw DaemonError("logind answered Inhibit without a descriptor")
                }
                return fd
            })
        }
        return call
    }

    // MARK: - The loop

    var descriptors: [Int32] { connection?.fileDescriptor.map { [$0] } ?? [] }
    var writing: [Int32] { connection?.hasMessagesToSend == true ? descriptors : [] }

    func readable(_ fd: Int32) {
        guard let connection, !connection.processAvailable() else { return }
        logger.warning("the system bus went away; sleep is seen only through the clock from now on")
        self.connection = nil
        following = false
        delayCall = nil
        blockCall = nil
    }

    /// Messages read meanwhile (during a blocking call elsewhere) are handled before the loop waits.
    func beforeWait() { connection?.dispatchPending() }

    var deadline: Instant? { [delayCall?.deadline, blockCall?.deadline, chassisCall?.deadline].compactMap { $0 }.min() }

    func deadlineReached(now: Instant) {
        if let (call, answered, deadline) = chassisCall, deadline <= now {
            call.cancel()
            chassisCall = nil
            logger.info("hostnamed did not say the chassis within \(Self.timeout)")
            answered(nil)
        }
        if let (call, deadline) = delayCall, deadline <= now {
            call.cancel()
            delayCall = nil
            logger.info("logind did not answer Inhibit within \(Self.timeout); sleep is seen only through the clock")
        }
        if let (call, reason, deadline) = blockCall, deadline <= now {
            call.cancel()
            blockCall = nil
            refused(reason, "logind did not answer within \(Self.timeout)")
        }
    }
}
