// Linux's event descriptors, each wrapped once, for poll loops: signals (signalfd), timers
// (timerfd, on any clock), file-system events (inotify) and another thread's news (eventfd). Each
// owns its descriptor and closes it.
public import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Signals delivered through a `signalfd`; they are blocked for the calling thread first, so they
/// arrive only here.
public final class SignalDescriptor {
    public let fd: Int32

    public init(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let blocked = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard blocked == 0 else { throw SystemError("pthread_sigmask", code: blocked) }
        do {
            fd = try SystemError.check("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
        } catch {
            // Without the descriptor, the signals do what they do by default again.
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            throw error
        }
    }

    deinit { try? Sys.close(fd) }

    /// The signals that arrived since the last read, in order.
    public func read() -> [Int32] {
        var received: [Int32] = []
        var info = signalfd_siginfo()
        while true {
            let n = try? withUnsafeMutableBytes(of: &info) { (buffer) throws(SystemError) -> Int? in try Sys.read(fd, into: buffer) }
            guard n == MemoryLayout<signalfd_siginfo>.size else { return received }
            received.append(Int32(info.ssi_signo))
        }
    }
}

/// A `timerfd` on one clock, armed to absolute times.
public final class TimerDescriptor {
    public let fd: Int32

    /// What reading the timer said.
    public enum Event: Equatable, Sendable {
        /// The armed time passed.
        case expired
        /// The wall clock was set (armed with `cancelOnSet`): everything must be re-evaluated.
        case clockChanged
        /// Nothing yet.
        case none
    }

    /// A timer on `clock` (CLOCK_REALTIME; CLOCK_REALTIME_ALARM wakes a suspended machine and needs
    /// CAP_WAKE_ALARM: EPERM without it).
    public init(clock: clockid_t) throws(SystemError) {
        fd = try SystemError.check("timerfd_create") { timerfd_create(clock, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
    }

    deinit { try? Sys.close(fd) }

    /// Arms the timer for the absolute time `seconds`.`nanoseconds` on its clock (one at or before
    /// the epoch fires at once). `cancelOnSet`: a jump of the wall clock wakes it too.
    public func arm(seconds: Int64, nanoseconds: Int64, cancelOnSet: Bool = false) throws(SystemError) {
        var spec = itimerspec()
        // An all-zero time would disarm the timer.
        if seconds > 0 {
            spec.it_value.tv_sec = time_t(seconds)
            spec.it_value.tv_nsec = Int(nanoseconds)
        } else {
            spec.it_value.tv_nsec = 1
        }
        let flags = Int32(TFD_TIMER_ABSTIME) | (cancelOnSet ? Int32(TFD_TIMER_CANCEL_ON_SET) : 0)
        try SystemError.check("timerfd_settime") { timerfd_settime(fd, flags, &spec, nil) }
    }

    /// Disarms the timer.
    public func disarm() throws(SystemError) {
        var spec = itimerspec()
        try SystemError.check("timerfd_settime") { timerfd_settime(fd, 0, &spec, nil) }
    }

    /// Reads the timer after poll said it is readable.
    public func read() throws(SystemError) -> Event {
        var expirations: UInt64 = 0
        do {
            let n = try withUnsafeMutableBytes(of: &expirations) { (buffer) throws(SystemError) -> Int? in try Sys.read(fd, into: buffer) }
            return n == 8 ? .expired : .none
        } catch where error.errno == .cancelled {
            return .clockChanged
        }
    }
}

/// An `inotify` instance and its watches.
public final class InotifyDescriptor {
    public let fd: Int32

    /// One event: the watch it came from, what happened, and the entry's name in a watched directory.
    public struct Event: Sendable {
        public var watch: Int32
        public var mask: UInt32
        public var name: String
    }

    public init() throws(SystemError) {
        fd = try SystemError.check("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    deinit { try? Sys.close(fd) }

    /// Watches `path` for `mask`: the watch descriptor.
    public func addWatch(_ path: String, mask: UInt32) throws(SystemError) -> Int32 {
        try SystemError.check("inotify_add_watch", context: path) { inotify_add_watch(fd, path, mask) }
    }

    /// Stops a watch (one the kernel already removed, with its directory, is not an error).
    public func removeWatch(_ watch: Int32) {
        _ = inotify_rm_watch(fd, watch)  // EINVAL only: the watch is gone already
    }

    /// The events waiting now (empty when none).
    public func read() throws(SystemError) -> [Event] {
        var events: [Event] = []
        let size = MemoryLayout<inotify_event>.size
        while let bytes = try Sys.read(fd, upTo: 64 * 1024), !bytes.isEmpty {
            var offset = 0
            while offset + size <= bytes.count {
                let (watch, mask, length) = bytes.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameBytes = bytes[(offset + size)..<min(offset + size + length, bytes.count)].prefix { $0 != 0 }
                events.append(Event(watch: watch, mask: mask, name: String(decoding: nameBytes, as: UTF8.self)))
                offset += size + length
            }
        }
        return events
    }
}

/// An `eventfd`: another thread's way to wake a poll loop. Any thread may `signal`; the loop reads
/// (`clear`) when poll says it is readable, and then looks at what the other thread left for it.
public final class EventDescriptor: @unchecked Sendable {
    // Immutable after init; eventfd's reads and writes are atomic, from any thread.
    public let fd: Int32

    public init() throws(SystemError) {
        fd = try SystemError.check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { try? Sys.close(fd) }

    /// Wakes the loop (from any thread). Never blocks: a counter that is already full wakes it anyway.
    public func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
    }

    /// Resets the counter after poll said the descriptor is readable.
    public func clear() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { Glibc.read(fd, $0.baseAddress, 8) }
    }
}
