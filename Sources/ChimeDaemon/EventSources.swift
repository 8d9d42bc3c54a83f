// Linux event sources for the daemon's one poll loop: a wall-clock timer and signals as file descriptors.
internal import CLinux
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

    public init() throws(StoreError) {
        fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard fd >= 0 else { throw StoreError("timerfd_create failed: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Arms the timer for `seconds`.`nanoseconds` since the epoch (a time in the past fires at once).
    public func arm(at seconds: Int64, nanoseconds: Int = 0) {
        var spec = itimerspec()
        // An all-zero time would disarm the timer; a time at or before the epoch fires at once.
        if seconds > 0 {
            spec.it_value.tv_sec = time_t(seconds)
            spec.it_value.tv_nsec = min(max(nanoseconds, 0), 999_999_999)
        } else {
            spec.it_value.tv_nsec = 1
        }
        timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET), &spec, nil)
    }

    /// Arms the timer for a time in nanoseconds since the epoch.
    public func arm(atNanoseconds time: Int64) {
        arm(at: time / 1_000_000_000, nanoseconds: Int(time % 1_000_000_000))
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

    public init(_ signals: [Int32]) throws(StoreError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        guard pthread_sigmask(SIG_BLOCK, &set, nil) == 0 else { throw StoreError("cannot block signals") }
        fd = signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { throw StoreError("signalfd failed: \(String(cString: strerror(errno)))") }
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

/// The current wall-clock time, in seconds and nanoseconds since the epoch.
public func wallClockNow() -> (seconds: Int64, nanoseconds: Int) {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return (Int64(ts.tv_sec), ts.tv_nsec)
}

/// The current wall-clock time in nanoseconds since the epoch (good until 2262).
public func wallClockNanoseconds() -> Int64 {
    let now = wallClockNow()
    return now.seconds * 1_000_000_000 + Int64(now.nanoseconds)
}
