// Linux event sources for the daemon's one poll loop: a wall-clock timer and signals as file
// descriptors (Posix's TimerDescriptor and SignalDescriptor, the one wrapping of each call).
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// A `timerfd` on `CLOCK_REALTIME`, armed to an absolute wall-clock time with
/// `TFD_TIMER_CANCEL_ON_SET`, so a clock jump wakes the loop to re-evaluate.
public final class WallClockTimer {
    private let timer: TimerDescriptor
    public var fd: Int32 { timer.fd }

    public typealias Event = TimerDescriptor.Event

    public init() throws(SystemError) {
        timer = try TimerDescriptor(clock: CLOCK_REALTIME)
    }

    /// Arms the timer for `instant` (one in the past, or at the epoch, fires at once).
    public func arm(at instant: Instant) throws(SystemError) {
        try timer.arm(seconds: instant.seconds, nanoseconds: instant.nanosecond, cancelOnSet: true)
    }

    /// Disarms the timer: nothing is due.
    public func disarm() throws(SystemError) {
        try timer.disarm()
    }

    /// Reads the timer after poll said it is readable.
    public func read() -> Event {
        // A read that fails otherwise than by a clock change says nothing; the loop re-arms anyway.
        (try? timer.read()) ?? .none
    }
}

/// The daemon's signals (SIGTERM, SIGINT, SIGHUP, SIGCHLD) through a `signalfd`.
public typealias SignalSource = SignalDescriptor
