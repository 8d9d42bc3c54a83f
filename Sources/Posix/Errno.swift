// errno as a typed value: read once, right after the call that set it, and compared by name.
#if canImport(Glibc)
import Glibc
#endif

/// An errno value.
///
/// ```swift
/// catch let error as SystemError where error.errno == .noEntry { ... }
/// ```
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's errno now.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let badDescriptor = Errno(rawValue: EBADF)
    public static let noChild = Errno(rawValue: ECHILD)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let accessDenied = Errno(rawValue: EACCES)
    public static let exists = Errno(rawValue: EEXIST)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let invalid = Errno(rawValue: EINVAL)
    public static let textBusy = Errno(rawValue: ETXTBSY)
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// O_NOFOLLOW met a symbolic link.
    public static let symbolicLink = Errno(rawValue: ELOOP)
    /// A timerfd armed with TFD_TIMER_CANCEL_ON_SET: the wall clock was set.
    public static let cancelled = Errno(rawValue: ECANCELED)

    /// The system's words for it, e.g. "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }
}
