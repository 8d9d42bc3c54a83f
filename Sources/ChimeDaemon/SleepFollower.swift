// Follows systemd-logind's PrepareForSleep on the system bus. While the daemon runs it holds a
// *delay* inhibitor lock ("recording alarms before sleep"): when logind announces a sleep, the
// daemon makes its store durable and only then lets go of the lock, so the machine never sleeps
// with an acknowledged change only in the page cache; at resume it takes the lock again and catches
// up what fell due during the sleep. No system bus, or no logind on it, is not an error: the kernel
// still reports the resume to the daemon's timer as a change of the wall clock.
import DBus
import Logging
#if canImport(Glibc)
import Glibc
#endif

final class SleepFollower {
    static let login1: BusName = "org.freedesktop.login1"
    static let managerPath: ObjectPath = "/org/freedesktop/login1"
    static let manager: InterfaceName = "org.freedesktop.login1.Manager"

    let connection: Connection
    private let logger: Logger
    private var subscription: SubscriptionToken?
    /// The inhibitor lock's descriptor; -1 while none is held.
    private(set) var inhibitor: Int32 = -1
    /// Whether logind answered: the daemon follows sleep (for chime status).
    private(set) var following = false
    /// Called with true before a sleep, false after the resume.
    var onSleep: (Bool) -> Void = { _ in }

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the default), or nil when there is none.
    init?(logger: Logger) {
        self.logger = logger
        do {
            connection = try Connection(.system)
        } catch {
            logger.info("no system bus (\(error)); sleep is seen only through the clock")
            return nil
        }
    }

    deinit {
        releaseInhibitor()
        holdBlock(nil)
    }

    /// Subscribes to PrepareForSleep and takes the delay lock.
    func start() {
        do {
            subscription = try connection.subscribe(
                MatchRule(sender: Self.login1, interface: Self.manager, member: "PrepareForSleep", path: Self.managerPath)
            ) { [weak self] message in
                guard let self, case .boolean(let starting)? = (try? message.arguments())?.first else { return }
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
            onSleep(true)
            releaseInhibitor()
        } else {
            logger.info("the machine woke up")
            // What fell due first: taking the lock again is a round trip to logind.
            onSleep(false)
            takeInhibitor()
        }
    }

    /// `Inhibit("sleep", "chime", …, "delay")`: the lock lasts as long as the descriptor is open.
    func takeInhibitor() {
        guard inhibitor < 0 else { return }
        do {
            inhibitor = try inhibit(why: "recording alarms before sleep", mode: "delay")
            following = true
        } catch {
            logger.info("logind gives no sleep lock (\(error)); sleep is seen only through the clock")
        }
    }

    func releaseInhibitor() {
        guard inhibitor >= 0 else { return }
        close(inhibitor)
        inhibitor = -1
    }

    /// The *block* lock held for an alarm that must not be slept through (nil: none).
    private(set) var blockReason: String?
    private var blockLock: Int32 = -1
    /// Why logind refused the block lock last time it was asked (nil: it did not).
    private(set) var blockRefusal: String?
    private var refusedReason: String?

    /// Holds a block lock with this reason ("alarm “Get up” at 07:00"), or lets go of it (nil).
    /// A lock for a new reason is taken before the old one is let go: no gap.
    func holdBlock(_ reason: String?) {
        // Asked again only when the reason changes: a refusal is not retried on every turn of the loop.
        guard reason != blockReason, reason == nil || reason != refusedReason else { return }
        let old = blockLock
        blockLock = -1
        blockReason = nil
        if let reason {
            do {
                blockLock = try inhibit(why: reason, mode: "block")
                blockReason = reason
                blockRefusal = nil
                refusedReason = nil
                logger.info("keeping the machine awake: \(reason)")
            } catch {
                blockRefusal = "\(error)"
                refusedReason = reason
                logger.warning("logind refused a lock to keep the machine awake for \(reason): \(error)")
            }
        }
        if old >= 0 { close(old) }
    }

    private func inhibit(why: String, mode: String) throws -> Int32 {
        let reply = try connection.call(
            destination: Self.login1, path: Self.managerPath, interface: Self.manager, member: "Inhibit",
            arguments: [.string("sleep"), .string("chime"), .string(why), .string(mode)], timeout: .milliseconds(5000))
        guard case .unixFD(let fd)? = reply.first, fd >= 0 else { throw DaemonError("logind answered Inhibit without a descriptor") }
        return fd
    }
}
