// Watches the alarm file for the daemon's poll loop with inotify. The directory is
// watched, not the file: an editor that writes a new file and renames it over the
// old one replaces the inode a file watch would follow. A symlinked file (dotfiles
// kept elsewhere) is followed to its target's directory too, and a directory that
// does not exist yet is waited for from its nearest existing ancestor.
internal import CLinux
import Posix
#if canImport(Glibc)
import Glibc
#endif

public final class ConfigWatcher {
    public let fd: Int32
    public let path: String
    /// Watched directories by watch descriptor, with the entry name that matters in each.
    private var watches: [Int32: (directory: String, name: String)] = [:]

    private static let entryEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    private static let selfEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)

    public init(path: String) throws(DaemonError) {
        self.path = path
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw DaemonError("cannot watch \(path): \(SystemError.last("inotify_init1"))") }
        refresh()
    }

    deinit { close(fd) }

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
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { break }
            let target = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : Self.split(current).directory + "/" + target
            add(current)
        }
        return out
    }

    /// Sets the watches to what `wanted()` says now (after a change that may move them).
    public func refresh() {
        let want = wanted()
        for (wd, watch) in watches where !want.contains(where: { $0 == watch }) {
            inotify_rm_watch(fd, wd)
            watches[wd] = nil
        }
        for entry in want where !watches.values.contains(where: { $0 == entry }) {
            let wd = inotify_add_watch(fd, entry.directory, Self.entryEvents | Self.selfEvents | UInt32(IN_ONLYDIR))
            if wd >= 0 { watches[wd] = entry }
        }
    }

    /// Reads pending events after poll said the descriptor is readable; true when one may have
    /// changed the file (the watches are then refreshed).
    public func read() -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            var offset = 0
            while offset + 16 <= n {
                let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                    (raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                     raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(n, offset + 16 + length)].prefix { $0 != 0 }
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true; continue }
                guard let watch = watches[wd] else { continue }
                if mask & (Self.selfEvents | UInt32(IN_IGNORED)) != 0 {
                    watches[wd] = nil
                    relevant = true
                } else if String(decoding: nameBytes, as: UTF8.self) == watch.name {
                    relevant = true
                }
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

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
