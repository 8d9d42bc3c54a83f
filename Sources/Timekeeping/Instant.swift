// chime's two time types: a moment (`Instant`) and a length of time (`TimeSpan`),
// both counted in nanoseconds, with arithmetic that cannot trap, and the one
// place "now" is read (`WallClock`).
#if canImport(Glibc)
import Glibc
#endif

/// A moment: nanoseconds since 1970-01-01 00:00:00 UTC (leap seconds ignored, as POSIX does).
///
/// Int64 nanoseconds reach from 1677 to 2262; every instant a request may name lies in
/// `Instant.earliest ... Instant.latest` (1970-2199, checked where requests enter), so
/// adding any span a request may hold stays far from the edges. Arithmetic saturates
/// at `distantPast`/`distantFuture` instead of trapping, whatever it is given.
///
/// ```swift
/// let set = WallClock.system.now()
/// let due = set + .minutes(5)
/// due.seconds  // whole seconds since the epoch, for calendar arithmetic
/// ```
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the epoch.
    public let nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) {
        self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
    }

    /// The instant `seconds` (and `nanosecond`, 0..<1,000,000,000) past the epoch; saturates
    /// outside Int64's range of nanoseconds.
    public init(seconds: UnixTime, nanosecond: Int64 = 0) {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: Instant.nanosecondsPerSecond)
        if overflow {
            nanosecondsSinceEpoch = seconds < 0 ? Int64.min : Int64.max
        } else {
            let (sum, overflow) = scaled.addingReportingOverflow(nanosecond)
            nanosecondsSinceEpoch = overflow ? (nanosecond < 0 ? Int64.min : Int64.max) : sum
        }
    }

    /// Exactly `seconds` past the epoch, or nil when that is outside what an instant can hold.
    public static func exactly(seconds: UnixTime, nanosecond: Int64 = 0) -> Instant? {
        let (scaled, o1) = seconds.multipliedReportingOverflow(by: nanosecondsPerSecond)
        let (sum, o2) = scaled.addingReportingOverflow(nanosecond)
        return o1 || o2 ? nil : Instant(nanosecondsSinceEpoch: sum)
    }

    static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// The whole second this instant falls in (rounded down), for calendar arithmetic.
    public var seconds: UnixTime { nanosecondsSinceEpoch.floorDivided(by: Self.nanosecondsPerSecond) }

    /// How far past its whole second this instant falls (0..<1,000,000,000).
    public var nanosecond: Int64 {
        // (The remainder, not `self - seconds * 10⁹`: that product leaves Int64 within a second of its least.)
        let remainder = nanosecondsSinceEpoch % Self.nanosecondsPerSecond
        return remainder < 0 ? remainder + Self.nanosecondsPerSecond : remainder
    }

    /// The start of this instant's whole second.
    public var wholeSecond: Instant { Instant(seconds: seconds) }

    /// 1970-01-01 00:00:00 UTC.
    public static let epoch = Instant(nanosecondsSinceEpoch: 0)
    /// The earliest instant a request may name.
    public static let earliest = epoch
    /// The latest instant a request may name: 2199-12-31 23:59:59 UTC. Rules are evaluated no
    /// further; an occurrence after it is "never".
    public static let latest = Instant(seconds: 7_258_118_399)
    /// Later than any instant a request may name (what saturating arithmetic reaches).
    public static let distantFuture = Instant(nanosecondsSinceEpoch: Int64.max)
    /// Earlier than any instant a request may name.
    public static let distantPast = Instant(nanosecondsSinceEpoch: Int64.min)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }

    /// `span` later (saturating).
    public static func + (instant: Instant, span: TimeSpan) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch.saturatingAdd(span.nanoseconds))
    }

    /// `span` earlier (saturating).
    public static func - (instant: Instant, span: TimeSpan) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch.saturatingSubtract(span.nanoseconds))
    }

    /// How long from `b` to `a` (saturating).
    public static func - (a: Instant, b: Instant) -> TimeSpan {
        TimeSpan(nanoseconds: a.nanosecondsSinceEpoch.saturatingSubtract(b.nanosecondsSinceEpoch))
    }

    /// `seconds.nanosecond`, e.g. `1793513400.250000000`.
    public var description: String {
        let fraction = String(nanosecond)
        return "\(seconds)." + String(repeating: "0", count: 9 - fraction.count) + fraction
    }
}

/// A length of time in nanoseconds (negative for "before"); arithmetic saturates.
public struct TimeSpan: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func seconds(_ seconds: Int64) -> TimeSpan {
        TimeSpan(nanoseconds: seconds.saturatingMultiply(Instant.nanosecondsPerSecond))
    }
    public static func milliseconds(_ milliseconds: Int64) -> TimeSpan {
        TimeSpan(nanoseconds: milliseconds.saturatingMultiply(1_000_000))
    }
    public static func minutes(_ minutes: Int64) -> TimeSpan { .seconds(minutes.saturatingMultiply(60)) }

    public static let zero = TimeSpan(nanoseconds: 0)

    /// Whole seconds (rounded toward zero).
    public var seconds: Int64 { nanoseconds / Instant.nanosecondsPerSecond }
    /// Whole milliseconds (rounded toward zero).
    public var milliseconds: Int64 { nanoseconds / 1_000_000 }

    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: TimeSpan, b: TimeSpan) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds.saturatingAdd(b.nanoseconds)) }
    public static func - (a: TimeSpan, b: TimeSpan) -> TimeSpan {
        TimeSpan(nanoseconds: a.nanoseconds.saturatingSubtract(b.nanoseconds))
    }
    public static func * (a: TimeSpan, factor: Int64) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds.saturatingMultiply(factor)) }

    /// As chime writes durations: `90s`, `5m`, `1h30m`, `2d`; sub-second spans as `250ms`.
    public var description: String {
        if nanoseconds < 0 { return "-" + TimeSpan(nanoseconds: 0 &- nanoseconds).description }
        if nanoseconds % Instant.nanosecondsPerSecond != 0 && nanoseconds < Instant.nanosecondsPerSecond {
            return "\(milliseconds)ms"
        }
        var rest = seconds
        if rest == 0 { return "0s" }
        var text = ""
        for (unit, size) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            // Weeks only when they say it exactly (3w, not 2w6d23h).
            if unit == "w", rest % size != 0 { continue }
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }
}

/// Where "now" comes from: the system's wall clock, or a clock a test sets.
///
/// The daemon and the command line read the time only through one of these.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Instant

    public init(_ read: @escaping @Sendable () -> Instant) { self.read = read }

    /// The current moment.
    public func now() -> Instant { read() }

    /// `CLOCK_REALTIME`.
    public static let system = WallClock {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Instant(seconds: Int64(ts.tv_sec), nanosecond: Int64(ts.tv_nsec))
    }

    /// A clock stopped at `instant` (tests).
    public static func fixed(_ instant: Instant) -> WallClock { WallClock { instant } }
}

extension Int64 {
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }

    func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    func saturatingMultiply(_ other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }
}
