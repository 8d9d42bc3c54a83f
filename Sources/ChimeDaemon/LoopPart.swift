// The face every part of the daemon shows its loop. A part owns its state; the loop asks each
// what to sleep on and when it must be woken, and tells it when either came. Nothing else of a
// part is the loop's business, and no part reads or writes another's stored state: parts ask each
// other through the few methods each offers (listed in each part's header comment).
import Timekeeping

/// One part of the daemon, as its loop sees it.
protocol LoopPart: AnyObject {
    /// Descriptors to wake the loop when readable (or hung up). Asked before every wait.
    var descriptors: [Int32] { get }
    /// Those of `descriptors` with something to write (the loop wakes when they can take it).
    var writing: [Int32] { get }
    /// When the part must next be given the loop (nil: never by itself). Asked before every wait.
    var deadline: Instant? { get }
    /// `fd`, one of `descriptors`, is readable.
    func readable(_ fd: Int32)
    /// The clock reached `deadline` (or passed it).
    func deadlineReached(now: Instant)
}

extension LoopPart {
    var descriptors: [Int32] { [] }
    var writing: [Int32] { [] }
    var deadline: Instant? { nil }
    func readable(_ fd: Int32) {}
    func deadlineReached(now: Instant) {}
}
