// Watches the alarm file for the daemon's poll loop with inotify. The directory is
// watched, not the file: an editor that writes a new file and renames it over the
// old one replaces the inode a file watch would follow. A symlinked file (dotfiles
// kept elsewhere) is followed to its target's directory too, and a directory that
// does not exist yet is waited for from its nearest existing ancestor.
import Posix
#if canImport(Glibc)
import Glibc
#endif

public final class ConfigWatcher {
    private let inotify: InotifyDescriptor
    public var fd: Int32 { inotify.fd }
    public let path: String
    /// Watched directories by watch descriptor, with the entry name that matters in each.
    private var watches: [Int32: (directory: String, name: String)] = [:]

    private static let entryEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    private static let selfEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)

    public init(path: String) throws(DaemonError) {
        self.path = path
        do { inotify = try InotifyDescriptor() } catch { throw DaemonError("cannot watch \(path): \(error)") }
        refresh()
    }

    /// The directories to watch now, each with the name of the entry that matters in it.
    func wanted() -> [(directory: String, name: String)] {
        var out: [(String, String)] = []
        func add(_ file: String) {
            var (directory, name) = Self.split(file)
            // The nearest existing ancestor stands in for directories not made yet.
            while !Self.isDirectory(directory), directory != "/" {
                (directory, name) = Self.split(directory)
            }
            if !out.contains(where: { $0 == (directory, name) }) { out.append((directory, name)) }
        }
        add(path)
        // Each link in a chain of symlinks: editing the target must be seen, and so must re-pointing a link.
        var current = path
        for _ in 0..<8 {
            guard let target = Sys.linkTarget(current) else { break }
            current = target.hasPrefix("/") ? target : Self.split(current).directory + "/" + target
            add(current)
        }
        return out
    }

    /// Sets the watches to what `wanted()` says now (after a change that may move them).
    public func refresh() {
        let want = wanted()
        for (wd, watch) in watches where !want.contains(where: { $0 == watch }) {
            inotify.removeWatch(wd)
            watches[wd] = nil
        }
        for entry in want where !watches.values.contains(where: { $0 == entry }) {
            // A directory that cannot be watched (gone meanwhile, no permission) is looked for again at the next event.
            if let wd = try? inotify.addWatch(entry.directory, mask: Self.entryEvents | Self.selfEvents | UInt32(IN_ONLYDIR)) {
                watches[wd] = entry
            }
        }
    }

    /// Reads pending events after poll said the descriptor is readable; true when one may have
    /// changed the file (the watches are then refreshed).
    public func read() -> Bool {
        var relevant = false
        // A read that fails (it should not) is taken as a change: the file is read again.
        let events: [InotifyDescriptor.Event]
        do { events = try inotify.read() } catch { events = []; relevant = true }
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true; continue }
            guard let watch = watches[event.watch] else { continue }
            if event.mask & (Self.selfEvents | UInt32(IN_IGNORED)) != 0 {
                watches[event.watch] = nil
                relevant = true
            } else if event.name == watch.name {
                relevant = true
            }
        }
        if relevant { refresh() }
        return relevant
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    static func isDirectory(_ path: String) -> Bool { Sys.isDirectory(path) }
}
