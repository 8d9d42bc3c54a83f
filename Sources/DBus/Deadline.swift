#if canImport(Glibc)
import Glibc
#endif

/// A moment on the monotonic clock (`CLOCK_MONOTONIC`), for `Connection.run(until:)`: as
/// `ContinuousClock.Instant` is, without the concurrency runtime, which a program that only sends a
/// notification would otherwise link and start (libdispatch's initialisation at every start).
public struct Deadline: Comparable, Hashable, Sendable {
    /// Nanoseconds on the monotonic clock.
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Now.
    public static var now: Deadline {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Deadline(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    /// `deadline` plus `duration` (saturating: a day or a century later are both "not soon").
    public static func + (deadline: Deadline, duration: Duration) -> Deadline {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflow2) = deadline.nanoseconds.addingReportingOverflow(scaled &+ attoseconds / 1_000_000_000)
        return Deadline(nanoseconds: overflow || overflow2 ? (seconds < 0 ? .min : .max) : sum)
    }

    /// How long from `self` to `other`.
    public func duration(to other: Deadline) -> Duration {
        .nanoseconds(other.nanoseconds &- nanoseconds)
    }

    public static func - (later: Deadline, earlier: Deadline) -> Duration { earlier.duration(to: later) }

    public static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }
}
