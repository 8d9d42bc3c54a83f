// The one place a failed system call becomes an error: errno is read once, right
// after the call, and kept with the call's name and what it was working on.
#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: its name, the errno it set, and what it was working on.
///
/// ```swift
/// let fd = try SystemError.check("timerfd_create") { timerfd_create(CLOCK_REALTIME, 0) }
/// // SystemError: "timerfd_create: Too many open files"
/// ```
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function, e.g. `inotify_add_watch`.
    public var call: String
    /// The errno value.
    public var code: Int32
    /// The errno value, typed.
    public var errno: Errno { Errno(rawValue: code) }
    /// What it was working on (a path, a program), or "".
    public var context: String

    public init(_ call: String, code: Int32, context: String = "") {
        self.call = call
        self.code = code
        self.context = context
    }

    /// The error of the call that just failed: reads `errno` now.
    public static func last(_ call: String, context: String = "") -> SystemError {
        SystemError(call, code: Errno.current.rawValue, context: context)
    }

    /// Runs `body`; a negative result is the call failing with `errno`, retried on EINTR.
    @discardableResult
    public static func check<T: SignedInteger>(_ call: String, context: String = "", _ body: () -> T) throws(SystemError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = Errno.current.rawValue
            if code != EINTR { throw SystemError(call, code: code, context: context) }
        }
    }

    /// The system's words for the code, e.g. "No such file or directory".
    public var reason: String { errno.description }

    public var description: String {
        context.isEmpty ? "\(call): \(reason)" : "\(context): \(call): \(reason)"
    }
}
