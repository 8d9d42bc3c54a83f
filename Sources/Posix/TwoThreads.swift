#if canImport(Glibc)
import Glibc
#endif

/// `body` over the two halves of `range`, each half on a thread of its own, and the two results in
/// order: the one way a big calendar's lines, events and alarms are worked through on two cores.
/// Each half is worked alone; nothing one does is seen by the other.
///
/// The second half runs on a thread started for it (pthreads: not libdispatch, which `chime`, the
/// notify front that links this module, must not load), the first on the caller's; when no thread
/// can be started, both run here, one after the other.
public func onTwoThreads<T>(_ range: Range<Int>, _ body: @Sendable (Range<Int>) -> T) -> (T, T) {
    let middle = range.lowerBound + range.count / 2
    return withoutActuallyEscaping(body) { body in
        let second = Half(middle..<range.upperBound, body)
        var thread = pthread_t()
        let context = Unmanaged.passUnretained(second as HalfRunner).toOpaque()
        let started = pthread_create(&thread, nil, { context in
            Unmanaged<HalfRunner>.fromOpaque(context!).takeUnretainedValue().run()
            return nil
        }, context) == 0
        let first = body(range.lowerBound..<middle)
        if started { pthread_join(thread, nil) } else { second.run() }
        return (first, second.result!)
    }
}

/// What the started thread runs (not generic: a C function cannot be).
private class HalfRunner: @unchecked Sendable {
    func run() {}
}

/// One half and, once run, its result (written by the thread, read after the join).
private final class Half<T>: HalfRunner, @unchecked Sendable {
    let range: Range<Int>
    let body: (Range<Int>) -> T
    var result: T?

    init(_ range: Range<Int>, _ body: @escaping (Range<Int>) -> T) {
        self.range = range
        self.body = body
    }

    override func run() { result = body(range) }
}

/// `body` run on a thread of its own from now, its result taken with `wait()`: the desktop app lists
/// the alarms while GTK starts. When no thread can be started, `body` runs in `wait()`.
public final class Background<T: Sendable>: @unchecked Sendable {
    private let job: Job<T>
    private var thread = pthread_t()
    private let started: Bool

    public init(_ body: @escaping @Sendable () -> T) {
        job = Job(body)
        let context = Unmanaged.passRetained(job as JobRunner).toOpaque()
        started = pthread_create(&thread, nil, { context in
            let job = Unmanaged<JobRunner>.fromOpaque(context!).takeRetainedValue()
            job.run()
            return nil
        }, context) == 0
        if !started { Unmanaged<JobRunner>.fromOpaque(context).release() }
    }

    /// The result, once the thread has ended (called once).
    public func wait() -> T {
        if started { pthread_join(thread, nil) } else { job.run() }
        return job.result!
    }
}

private class JobRunner: @unchecked Sendable {
    func run() {}
}

private final class Job<T>: JobRunner, @unchecked Sendable {
    let body: () -> T
    var result: T?

    init(_ body: @escaping () -> T) { self.body = body }

    override func run() { result = body() }
}
