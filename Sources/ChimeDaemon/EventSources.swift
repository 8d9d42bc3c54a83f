// Linux event sources for the daemon's one poll loop: a wall-clock timer and signals as file descriptors.
internal import CLinux
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// A `timerfd` on `CLOCK_REALTIME`, armed to an absolute wall-clock time with
/// `TFD_TIMER_CANCEL_ON_SET`, so a clock jump wakes the loop to re-evaluate.
public final class WallClockTimer {
    public let fd: Int32

    /// What reading the timer said.
    public enum Event: Equatable, Sendable {
        /// The armed time passed.
        case expired
        /// The wall clock was set (a jump); everything must be re-evaluated.
        case clockChanged
        /// Nothing yet.
        case none
    }

    public init() throws(SystemError) {
        fd = try SystemError.check("timerfd_create") { timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
    }

    deinit { close(fd) }

    /// Arms the timer for `instant` (one in the past, or at the epoch, fires at once).
    public func arm(at instant: Instant) {
        var spec = itimerspec()
        // An all-zero time would disarm the timer: a time at or before the epoch fires at once.
        if instant.seconds > 0 {
            spec.it_value.tv_sec = time_t(instant.seconds)
            spec.it_value.tv_nsec = Int(instant.nanosecond)
        } else {
            spec.it_value.tv_nsec = 1
        }
        timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET), &spec, nil)
    }

    /// Disarms the timer: nothing is due.
    public func disarm() {
        var spec = itimerspec()
        timerfd_settime(fd, 0, &spec, nil)
    }

    /// Reads the timer after poll said it is readable.
    public func read() -> Event {
        var expirations: UInt64 = 0
        let n = Glibc.read(fd, &expirations, 8)
        if n == 8 { return .expired }
        if n < 0 && errno == ECANCELED { return .clockChanged }
        return .none
    }
}

/// Signals delivered through a `signalfd` (they are blocked for the calling thread first).
public final class SignalSource {
    public let fd: Int32

    public init(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let blocked = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard blocked == 0 else { throw SystemError("pthread_sigmask", code: blocked) }
        fd = try SystemError.check("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
    }

    deinit { close(fd) }

    /// The signals that arrived, in order.
    public func read() -> [Int32] {
        var received: [Int32] = []
        var info = signalfd_siginfo()
        while Glibc.read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            received.append(Int32(info.ssi_signo))
        }
        return received
    }
}
