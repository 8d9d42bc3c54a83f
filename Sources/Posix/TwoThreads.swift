import Dispatch

/// `body` over the two halves of `range`, each half on a thread of its own, and the two results in
/// order: the one way a big calendar's lines, events and alarms are worked through on two cores.
/// Each half is worked alone; nothing one does is seen by the other.
public func onTwoThreads<T>(_ range: Range<Int>, _ body: @Sendable (Range<Int>) -> T) -> (T, T) {
    let middle = range.lowerBound + range.count / 2
    let halves = [range.lowerBound..<middle, middle..<range.upperBound]
    let results = UnsafeMutableBufferPointer<T?>.allocate(capacity: 2)
    results.initialize(repeating: nil)
    defer {
        _ = results.deinitialize()
        results.deallocate()
    }
    nonisolated(unsafe) let out = results  // (each thread writes its own element)
    DispatchQueue.concurrentPerform(iterations: 2) { half in out[half] = body(halves[half]) }
    return (results[0]!, results[1]!)
}
