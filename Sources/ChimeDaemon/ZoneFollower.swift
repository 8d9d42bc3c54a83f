// Follows the system's time zone (/etc/localtime, re-pointed by timedatectl): a change re-plans
// every alarm, as a clock jump does. A part of the daemon: it owns the watch and the zone last
// planned with, and tells the others (`events.changed`) when the zone is another one.
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

final class ZoneFollower: LoopPart {
    let clock: WallClock
    let logger: Logger
    /// Called when the system's zone is another one than the alarms were planned with.
    /// What the zone follower tells the other parts (wired by the daemon).
    struct Events {
        /// The system's zone is another one now.
        var changed: () -> Void = {}
    }
    var events = Events()
    /// nil when the zone cannot be watched (then only a restart sees a change).
    private var watcher: ConfigWatcher?
    /// The system's zone as last planned with, to tell a real change from other events in /etc.
    private var plannedZone = ""

    init(clock: WallClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    var descriptors: [Int32] { watcher.map { [$0.fd] + ($0.addingFD.map { [$0] } ?? []) } ?? [] }

    func start() {
        #if DEBUG
        // Test builds only: a test points the daemon at a localtime of its own, since a test must
        // never change the machine's zone. Release builds have no such switch.
        if let path = Sys.environment("CHIME_TEST_LOCALTIME"), !path.isEmpty { Zone.localtimePath = path }
        #endif
        plannedZone = Self.fingerprint(now: clock.now())
        do {
            watcher = try ConfigWatcher(path: Zone.localtimePath)
        } catch {
            logger.warning("cannot follow the system time zone (\(error)); a change is seen at the next start")
        }
    }

    /// Something changed where the system's zone is named: when the zone is another one now, every
    /// alarm's next time is computed again (a wall-clock rule keeps its wall time in the new zone).
    func readable(_ fd: Int32) {
        guard let watcher else { return }
        if fd == watcher.addingFD {
            guard watcher.added() else { return }
        } else {
            guard watcher.read() else { return }
            watcher.refresh()
        }
        let zone = Self.fingerprint(now: clock.now())
        guard zone != plannedZone else { return }
        logger.info("the system time zone changed (\(plannedZone) → \(zone)); re-evaluating every alarm")
        plannedZone = zone
        events.changed()
    }

    /// The system's zone by name and by its two offsets (standard and summer time, whichever season
    /// it is): a localtime that is a copied file (no name to compare) is told apart by what it does.
    /// The schedule keeps it with its plans (`Store.PlanKey.zone`).
    static func fingerprint(now: Instant) -> String {
        let zone = Zone.system()
        let offsets = [zone.offset(at: now.seconds), zone.offset(at: now.seconds + 182 * 86_400)].sorted()
        return "\(zone.identifier) \(offsets[0])/\(offsets[1])"
    }
}
