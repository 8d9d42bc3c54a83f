import Timekeeping

/// The pending occurrences, earliest first: a binary min-heap keyed by fire time
/// , so scheduling, cancelling and
/// firing stay O(log n) with 100,000 alarms.
///
/// Cancelling and rescheduling leave the old entry in the heap and bump the
/// identifier's generation; stale entries are skipped when they reach the top.
public struct OccurrenceQueue: Sendable {
    struct Entry: Sendable {
        var time: Instant
        var identifier: String
        var generation: Int
    }

    /// An identifier's generation (bumped at each schedule and cancel, so older heap entries are
    /// stale) and its time while it is scheduled: one dictionary, one lookup per change.
    private struct Slot: Sendable {
        var generation = 0
        var time: Instant?
    }

    private var heap: [Entry] = []
    private var slots: [String: Slot] = [:]
    /// How many identifiers have a pending occurrence.
    public private(set) var count = 0

    public init() {}

    /// Makes room for `count` identifiers at once (a big calendar's alarms are queued one by one,
    /// and a dictionary grown that way copies all it holds at each doubling).
    public mutating func reserveCapacity(_ count: Int) {
        slots.reserveCapacity(count)
        heap.reserveCapacity(count)
    }

    /// The time `identifier` fires next, if it is scheduled.
    public func time(of identifier: String) -> Instant? { slots[identifier]?.time }

    /// Schedules (or reschedules) `identifier` at `time`.
    public mutating func schedule(_ identifier: String, at time: Instant) {
        let (generation, wasScheduled) = Self.update(&slots[identifier, default: Slot()]) { slot in
            let was = slot.time != nil
            slot.generation += 1
            slot.time = time
            return (slot.generation, was)
        }
        if !wasScheduled { count += 1 }
        heap.append(Entry(time: time, identifier: identifier, generation: generation))
        siftUp(heap.count - 1)
        compactIfBloated()
    }

    /// Removes `identifier`'s occurrence, if any.
    public mutating func cancel(_ identifier: String) {
        guard slots[identifier]?.time != nil else { return }
        Self.update(&slots[identifier, default: Slot()]) { slot in
            slot.generation += 1
            slot.time = nil
        }
        count -= 1
        compactIfBloated()
    }

    /// The slot changed in place (the dictionary's entry found once).
    @discardableResult
    private static func update<T>(_ slot: inout Slot, _ body: (inout Slot) -> T) -> T { body(&slot) }

    /// The earliest pending occurrence.
    public mutating func earliest() -> (identifier: String, time: Instant)? {
        dropStale()
        return heap.first.map { ($0.identifier, $0.time) }
    }

    /// Removes and returns every occurrence due at or before `now`, earliest first.
    public mutating func popDue(_ now: Instant) -> [(identifier: String, time: Instant)] {
        var due: [(String, Instant)] = []
        while true {
            dropStale()
            guard let top = heap.first, top.time <= now else { break }
            popTop()
            Self.update(&slots[top.identifier, default: Slot()]) { slot in
                slot.generation += 1
                slot.time = nil
            }
            count -= 1
            due.append((top.identifier, top.time))
        }
        return due
    }

    // MARK: - The heap

    private func isStale(_ entry: Entry) -> Bool {
        guard let slot = slots[entry.identifier] else { return true }
        return slot.generation != entry.generation || slot.time == nil
    }

    private mutating func dropStale() {
        while let top = heap.first, isStale(top) { popTop() }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    /// Rebuilds the heap when stale entries outnumber live ones, so memory stays O(live).
    private mutating func compactIfBloated() {
        guard heap.count > 64, heap.count > 2 * count else { return }
        let kept = heap.filter { !isStale($0) }
        heap = kept
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        (a.time, a.identifier) < (b.time, b.identifier)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, Self.before(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard Self.before(heap[smallest], heap[parent]) else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
