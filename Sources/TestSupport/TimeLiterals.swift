import Timekeeping

// In tests only, a number is a time in seconds, as people write them: `anchor: 100` is
// 100 s after the epoch, `snooze = 60` a minute. Nanoseconds are always spelled out
// (`Instant(nanosecondsSinceEpoch:)`). The libraries themselves have no such shortcut.
extension Instant: ExpressibleByIntegerLiteral {
    public init(integerLiteral seconds: Int64) { self.init(seconds: seconds) }
}

extension TimeSpan: ExpressibleByIntegerLiteral {
    public init(integerLiteral seconds: Int64) { self = .seconds(seconds) }
}
