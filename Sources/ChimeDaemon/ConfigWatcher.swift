// Watches the alarm file for the daemon's poll loop with inotify. The directory is
// watched, not the file: an editor that writes a new file and renames it over the
// old one replaces the inode a file watch would follow. A symlinked file (dotfiles
// kept elsewhere) is followed to its target's directory too, and a directory that
// does not exist yet is waited for from its nearest existing ancestor.
//
// Watches made after the start are added on a thread of their own (`addingFD` says when they
// are): the kernel marks every cached entry of a directory when it is first watched, 13 ms for a
// folder of 100,000 events that was just read, which would hold the daemon's loop. Events that
// come for them meanwhile wait, and are taken once they are known.
import Posix
#if canImport(Glibc)
import Glibc
#endif

public final class ConfigWatcher {
    private let inotify: InotifyDescriptor
    public var fd: Int32 { inotify.fd }
    public let path: String
    /// Calendars the alarm file follows: an .ics file (watched as the alarm file is), or a
    /// directory of them (any .ics entry in it matters, and the directory itself in its parent).
    public var followed: [String] = [] {
        didSet { if followed != oldValue { refresh() } }
    }
    /// Watched directories by watch descriptor, with the entry name that matters in each
    /// (`*.ics`: any calendar file in a followed directory).
    private var watches: [Int32: (directory: String, names: Set<String>)] = [:]

    private static let entryEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
    private static let selfEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)

    public init(path: String) throws(DaemonError) {
        self.path = path
        do { inotify = try InotifyDescriptor() } catch { throw DaemonError("cannot watch \(path): \(error)") }
        refresh()
        offLoop = true
    }

    /// Whether new watches are added on a thread (from the first refresh after the start).
    private var offLoop = false
    /// The watches being added on a thread of their own: their directories and names, and the
    /// descriptor that says the thread is done.
    private var adding: (job: Background<[Int32]>, directories: [(directory: String, names: Set<String>)], done: EventDescriptor)?
    /// Events read while watches were being added, for watches not known yet.
    private var early: [InotifyDescriptor.Event] = []
    /// A refresh asked for while watches were being added: done once they are.
    private var refreshOwed = false

    /// Readable when the watches being added are (then `added()`); nil when none are.
    public var addingFD: Int32? { adding?.done.fd }

    /// The thread adding watches is done: they are known from now, with the events that came for
    /// them meanwhile. True when one of those may have changed the file (as `read()`).
    public func added() -> Bool {
        guard let (job, directories, done) = adding else { return false }
        adding = nil
        done.clear()
        for ((directory, names), wd) in zip(directories, job.wait()) where wd >= 0 {
            // (The same directory twice, as two paths to it, is one watch.)
            if watches[wd] != nil { watches[wd]?.names.formUnion(names) } else { watches[wd] = (directory, names) }
        }
        let waiting = early
        early = []
        let relevant = take(waiting)
        if refreshOwed {
            refreshOwed = false
            refresh()
        }
        return relevant
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
        for calendar in followed {
            add(calendar)
            if Self.isDirectory(calendar), !out.contains(where: { $0 == (calendar, Self.anyCalendar) }) {
                out.append((calendar, Self.anyCalendar))
            }
        }
        // Each link in a chain of symlinks: editing the target must be seen, and so must re-pointing a link.
        var current = path
        for _ in 0..<8 {
            guard let target = Sys.linkTarget(current) else { break }
            current = target.hasPrefix("/") ? target : Self.split(current).directory + "/" + target
            add(current)
        }
        return out
    }

    /// Sets the watches to what `wanted()` says now (after a change that may move them). One
    /// directory is one watch, with every entry that matters in it (the alarm file and a calendar
    /// may share a directory).
    public func refresh() {
        var want: [String: Set<String>] = [:]
        for entry in wanted() { want[entry.directory, default: []].insert(entry.name) }
        for (wd, watch) in watches where want[watch.directory] == nil {
            inotify.removeWatch(wd)
            watches[wd] = nil
        }
        var new: [(directory: String, names: Set<String>)] = []
        for (directory, names) in want {
            if let wd = watches.first(where: { $0.value.directory == directory })?.key {
                watches[wd]?.names = names
                continue
            }
            new.append((directory, names))
        }
        guard !new.isEmpty else { return }
        if adding != nil {
            refreshOwed = true
            return
        }
        let mask = Self.entryEvents | Self.selfEvents | UInt32(IN_ONLYDIR)
        if offLoop, let done = try? EventDescriptor() {
            let fd = inotify.fd, directories = new.map(\.directory)
            let job = Background { () -> [Int32] in
                defer { done.signal() }
                return directories.map { inotify_add_watch(fd, $0, mask) }
            }
            adding = (job, new, done)
            return
        }
        for (directory, names) in new {
            // A directory that cannot be watched (gone meanwhile, no permission) is looked for again at the next event.
            if let wd = try? inotify.addWatch(directory, mask: mask) {
                watches[wd] = (directory, names)
            }
        }
    }

    /// What changed since `takeChanges()` was last asked: the files of calendar folders by path,
    /// and whether anything else did (the alarm file, a calendar that is one file, a folder itself,
    /// a lost event): then all is read again.
    public struct Changes: Equatable {
        public var files: Set<String> = []
        public var whole = false
        public var isEmpty: Bool { files.isEmpty && !whole }
    }
    private var changes = Changes()

    /// The most files kept as changed: past them, all is read (a sync that rewrote a whole folder).
    static let mostFiles = 4096

    /// The changes seen since the last call, and none from now.
    public func takeChanges() -> Changes {
        defer { changes = Changes() }
        return changes
    }

    /// Reads pending events after poll said the descriptor is readable; true when one may have
    /// changed the file (the watches are then refreshed). What changed waits in `takeChanges()`.
    public func read() -> Bool {
        let events: [InotifyDescriptor.Event]
        do { events = try inotify.read() } catch {
            // A read that fails (it should not) is taken as a change: all is read again.
            changes = Changes(whole: true)
            refresh()
            return true
        }
        return take(events)
    }

    /// What the events say changed, into `changes`; true when one may have changed the file (the
    /// watches are then refreshed).
    private func take(_ events: [InotifyDescriptor.Event]) -> Bool {
        var relevant = false
        var whole = false
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true; whole = true; continue }
            guard let watch = watches[event.watch] else {
                // (For a watch being added: taken once it is known; past a bound, all is read.)
                if adding != nil {
                    if early.count < Self.mostFiles { early.append(event) } else { relevant = true; whole = true }
                }
                continue
            }
            if event.mask & (Self.selfEvents | UInt32(IN_IGNORED)) != 0 {
                watches[event.watch] = nil
                relevant = true
                whole = true
            } else if watch.names.contains(event.name) {
                relevant = true
                whole = true
            } else if watch.names.contains(Self.anyCalendar) && event.name.hasSuffix(".ics") {
                relevant = true
                // (A directory named *.ics changing is not one file's change.)
                if event.mask & UInt32(IN_ISDIR) != 0 || changes.whole || changes.files.count >= Self.mostFiles {
                    whole = true
                } else {
                    changes.files.insert(watch.directory + "/" + event.name)
                }
            }
        }
        if whole {
            changes.whole = true
            changes.files = []  // (all is read: which files is not kept)
        }
        if relevant { refresh() }
        return relevant
    }

    /// The entry name that stands for any .ics file of a followed directory.
    static let anyCalendar = "*.ics"

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    static func isDirectory(_ path: String) -> Bool { Sys.isDirectory(path) }
}
