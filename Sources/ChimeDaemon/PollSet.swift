// The daemon's poll set: every descriptor the loop sleeps on, under a name, so what woke
// the loop is asked by name ("did the timer fire?"), never by a position in an array.
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// What the loop sleeps on.
enum PollSource: Hashable {
    /// The session bus connection.
    case bus
    /// The wall-clock timer armed to whatever comes first.
    case timer
    /// SIGTERM, SIGINT, SIGHUP, SIGCHLD.
    case signals
    /// A descriptor of one of the daemon's parts (`LoopPart`): the part's index, and the descriptor.
    case part(Int, Int32)
}

/// Descriptors with their names, for one `poll`.
struct PollSet {
    private var fds: [pollfd] = []
    private var names: [PollSource] = []

    /// Adds `fd` under `name` (a negative `fd` is left out).
    mutating func add(_ name: PollSource, fd: Int32, writable: Bool = false) {
        guard fd >= 0 else { return }
        fds.append(pollfd(fd: fd, events: Int16(POLLIN) | (writable ? Int16(POLLOUT) : 0), revents: 0))
        names.append(name)
    }

    /// Sleeps until a source is ready (no timeout: the timer is one of the sources). The daemon's
    /// signals arrive through their descriptor, so a wait interrupted otherwise simply goes on.
    mutating func wait() throws(SystemError) {
        try Sys.poll(&fds)
    }

    /// Whether `name` has something for the loop (readable, writable, or hung up).
    func isReady(_ name: PollSource) -> Bool {
        guard let index = names.firstIndex(of: name) else { return false }
        return fds[index].revents != 0
    }

    /// The sources that are ready, in the order they were added.
    var ready: [PollSource] {
        zip(names, fds).filter { $0.1.revents != 0 }.map(\.0)
    }
}
