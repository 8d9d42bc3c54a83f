import CGtk

/// A timer or a file descriptor watched by GLib's main loop: it runs its closure until the
/// closure says stop or the `Source` goes (its `deinit` removes it from the loop).
public final class Source {
    private var id: UInt32 = 0
    private let body: () -> Bool

    /// Every `milliseconds`, while `body` returns true.
    public init(every milliseconds: UInt32, _ body: @escaping () -> Bool) {
        self.body = body
        id = g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, sourceTrampoline, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Once, after `milliseconds`.
    public convenience init(after milliseconds: UInt32, _ body: @escaping () -> Void) {
        self.init(every: milliseconds) { body(); return false }
    }

    /// When the loop has nothing else to do, once.
    public init(idle body: @escaping () -> Void) {
        self.body = { body(); return false }
        id = g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, sourceTrampoline, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Whenever `descriptor` is readable (or hung up), while `body` returns true.
    public init(reading descriptor: Int32, _ body: @escaping () -> Bool) {
        self.body = body
        let condition = GIOCondition(G_IO_IN.rawValue | G_IO_HUP.rawValue | G_IO_ERR.rawValue)
        id = g_unix_fd_add_full(G_PRIORITY_DEFAULT, descriptor, condition, fdTrampoline, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Whether it will still run.
    public var isActive: Bool { id != 0 }

    /// Stops it.
    public func cancel() {
        if id != 0 { g_source_remove(id) }
        id = 0
    }

    deinit { cancel() }

    fileprivate func fire() -> Int32 {
        if body() { return 1 }
        id = 0  // GLib removes it as the closure returns false
        return 0
    }
}

private let sourceTrampoline: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { data in
    Unmanaged<Source>.fromOpaque(data!).takeUnretainedValue().fire()
}
private let fdTrampoline: @convention(c) (Int32, GIOCondition, UnsafeMutableRawPointer?) -> Int32 = { _, _, data in
    Unmanaged<Source>.fromOpaque(data!).takeUnretainedValue().fire()
}

/// Microseconds of the monotonic clock GLib's frame clock uses (for measuring a first frame).
public func monotonicMicroseconds() -> Int64 { Int64(g_get_monotonic_time()) }
