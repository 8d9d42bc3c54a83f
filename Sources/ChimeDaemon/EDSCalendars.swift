// The calendars of GNOME's Evolution Data Server (`[[calendar]] eds`): for each, a child
// `chime-eds mirror EDS FOLDER` keeps a folder in the state directory in step with the calendar,
// both ways, and the follower reads that folder as it reads any vdir (the same reader, answers and
// bounds). libecal and GLib's loop live in that child only: the daemon never links them, and the
// child's crash, hang or end costs it nothing. What the child says is read here line by line;
// when it ends it is started again after a pause that grows (2 s to 5 min), and a child that
// keeps crashing before its calendar is ready is left stopped until the person has the file read
// again (SIGHUP, `chime config reload`: never a restart loop). Whatever happens, the folder stays as it was: the alarms known keep ringing.
// Owned by the alarm file's follower, whose descriptors and deadline it shares.
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

final class EDSCalendars {
    struct Mirror {
        var wanted: ReaderSummary.WireEDS
        var child: Child?
        /// What it said that is not a whole line yet.
        var partial: [UInt8] = []
        /// When it is started again (nil: running, or left stopped).
        var restartAt: Instant?
        /// Its folder holds the calendar (it said `ready`) since it last started; ever, this run;
        /// and whether a state of an earlier run was there when it first started (a folder in step
        /// but for what changed meanwhile, read as it is).
        var ready = false
        var everReady = false
        var hadState = false
        /// How many events the calendar held when last ready (by calendar UID for `*`).
        var events: [String: Int] = [:]
        /// Ends in a row without being ready, and how the last one ended.
        var failures = 0
        var crashes = 0
        var problem: String?
        var since: Instant?
        /// The last problem it reported about one event or calendar (said in `chime status`).
        var lastError: String?
        /// The calendars (by UID for `*`) that GNOME's own reminders ring too.
        var gnomeReminders: Set<String> = []
    }

    private var mirrors: [ReaderSummary.WireEDS: Mirror] = [:]
    private let children: any ProgramRunner
    private let clock: WallClock
    private let logger: Logger
    /// Something `chime status` or the calendars' list says changed.
    private let changed: () -> Void
    /// A calendar's first pass is over (`ready`): its folder holds it whole.
    private let ready: () -> Void
    /// The program (chime-eds beside the daemon's own, as installed in libexec).
    var program: String = EDSCalendars.defaultProgram

    /// The longest line the child may say (a calendar's name, an error): longer is cut.
    static let lineLimit = 4096
    static let firstPause = TimeSpan.seconds(2)
    static let longestPause = TimeSpan.seconds(300)
    /// Crashes in a row (killed by a signal) before its calendar was ready, after which the child
    /// is not started again until the alarm file changes.
    static let crashesBeforeQuarantine = 3
    /// The mirror runs as long as the daemon does.
    static let noTimeLimit = TimeSpan.seconds(100 * 366 * 86_400)

    static var defaultProgram: String {
        #if DEBUG
        if let other = Sys.environment("CHIME_TEST_EDS_PROGRAM") { return other }
        #endif
        return Sys.besideThisProgram("chime-eds")
    }

    init(children: any ProgramRunner, clock: WallClock, logger: Logger, changed: @escaping () -> Void, ready: @escaping () -> Void) {
        self.children = children
        self.clock = clock
        self.logger = logger
        self.changed = changed
        self.ready = ready
    }

    /// Whether `path` is (or is in) the folder of an EDS calendar that chime-eds is filling for
    /// the first time (it has never said `ready` to this daemon, and its folder holds no state yet).
    func isFilling(_ path: String) -> Bool {
        mirrors.values.contains { mirror in
            (path == mirror.wanted.folder || path.hasPrefix(mirror.wanted.folder + "/")) && !mirror.everReady && !mirror.hadState
        }
    }

    /// The EDS calendars as the alarm file says them now: a new one starts, one gone stops (its
    /// folder stays: the file may name it again), the rest go on. A child left stopped after its
    /// crashes gets a fresh chance when the person asks for the file to be read again (`fresh`:
    /// SIGHUP, `chime config reload`), never by a reading its own folder's changes caused.
    func configure(_ wanted: [ReaderSummary.WireEDS], now: Instant, fresh: Bool = false) {
        let set = Set(wanted)
        for (key, mirror) in mirrors where !set.contains(key) {
            if let child = mirror.child { children.stop(child.pid) }
            mirrors[key] = nil
            logger.info("stopped following the EDS calendar \(key.eds)")
        }
        for key in wanted {
            if var mirror = mirrors[key] {
                if fresh, mirror.child == nil, mirror.crashes >= Self.crashesBeforeQuarantine {
                    mirror.crashes = 0
                    mirror.restartAt = now
                    mirrors[key] = mirror
                }
                continue
            }
            var mirror = Mirror(wanted: key, restartAt: now)
            mirror.hadState = key.eds == "*" ? Sys.isDirectory(key.folder) : ((try? Sys.status(key.folder + "/.chime-eds-state")) ?? nil) != nil
            mirrors[key] = mirror
        }
        startDue(now: now)
    }

    /// Stops every child (the daemon stops).
    func stopAll() {
        for mirror in mirrors.values { if let child = mirror.child { children.stop(child.pid) } }
    }

    var descriptors: [Int32] { mirrors.values.compactMap { $0.child.map(\.output) }.filter { $0 >= 0 } }

    var deadline: Instant? { mirrors.values.compactMap(\.restartAt).min() }

    func due(now: Instant) { startDue(now: now) }

    func readable(_ fd: Int32) -> Bool {
        guard let key = mirrors.first(where: { $0.value.child?.output == fd })?.key, var mirror = mirrors[key], let child = mirror.child else {
            return false
        }
        var lines: [String] = []
        for _ in 0..<16 {
            guard let chunk = child.readStreamed(upTo: 64 << 10), !chunk.isEmpty else { break }
            var rest = chunk[...]
            while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                mirror.partial += rest[..<newline].prefix(max(0, Self.lineLimit - mirror.partial.count))
                lines.append(String(decoding: mirror.partial, as: UTF8.self))
                mirror.partial = []
                rest = rest[(newline + 1)...]
            }
            mirror.partial += rest.prefix(max(0, Self.lineLimit - mirror.partial.count))
        }
        var news = false
        let wasReady = mirror.everReady
        for line in lines { news = heard(line, &mirror) || news }
        if mirror.ready { mirror.everReady = true }
        mirrors[key] = mirror
        if news { changed() }
        if mirror.everReady, !wasReady { ready() }
        return true
    }

    /// One line of a child: `ready N`, `error …`, `wrote`/`removed`/`put UID`, `gone`; with `*`
    /// each begins with the calendar's UID. True when the status changed.
    private func heard(_ line: String, _ mirror: inout Mirror) -> Bool {
        var words = line.split(separator: " ", maxSplits: 1).map(String.init)
        var calendar = ""
        if mirror.wanted.eds == "*", words.count == 2, !["ready", "unchanged", "events", "error", "wrote", "removed", "put", "reminders", "dismissed"].contains(words[0]) {
            calendar = words[0]
            words = words[1].split(separator: " ", maxSplits: 1).map(String.init)
        }
        guard let verb = words.first else { return false }
        let rest = words.count > 1 ? words[1] : ""
        switch verb {
        case "ready":
            mirror.events[calendar] = Int(rest) ?? 0
            let news = !mirror.ready || mirror.problem != nil
            if !mirror.ready { logger.info("following the EDS calendar \(mirror.wanted.eds): ready", metadata: ["events": "\(rest)", "calendar": "\(calendar)"]) }
            mirror.ready = true
            mirror.failures = 0
            mirror.crashes = 0
            mirror.problem = nil
            mirror.since = nil
            return news
        case "events":
            mirror.events[calendar] = Int(rest) ?? 0
            return true
        case "gone":
            mirror.events[calendar] = nil
            mirror.gnomeReminders.remove(calendar)
            return true
        case "reminders":
            let before = mirror.gnomeReminders
            if rest == "on" { mirror.gnomeReminders.insert(calendar) } else { mirror.gnomeReminders.remove(calendar) }
            if before != mirror.gnomeReminders {
                logger.info("EDS calendar \(mirror.wanted.eds): GNOME's own reminders \(rest == "on" ? "ring it too" : "leave it to chime")",
                            metadata: ["calendar": "\(calendar)"])
            }
            return before != mirror.gnomeReminders
        case "error":
            logger.warning("EDS calendar \(mirror.wanted.eds): \(calendar.isEmpty ? "" : calendar + ": ")\(rest)")
            mirror.lastError = (calendar.isEmpty ? "" : calendar + ": ") + rest
            return true
        default:
            return false
        }
    }

    /// A child ended: said, and started again after a pause (or, crashing, left stopped).
    private func ended(_ key: ReaderSummary.WireEDS, _ child: Child) {
        guard var mirror = mirrors[key], mirror.child === child else { return }
        let now = clock.now()
        mirror.child = nil
        mirror.partial = []
        let status = child.waitStatus.map { $0 & 0x7f == 0 ? Int(($0 >> 8) & 0xff) : -1 } ?? -1
        let why: String = switch status {
        case 3: "Evolution Data Server has no calendar \"\(key.eds)\" (is it switched off, or named otherwise in GNOME Calendar?)"
        case 4: "Evolution Data Server cannot be reached (is evolution-data-server installed and the session bus up?)"
        case 5: "Evolution Data Server cannot open the calendar \"\(key.eds)\"" + (mirror.lastError.map { ": " + $0 } ?? "")
        case 6: "its folder \(key.folder) cannot be written"
        case 7: "Evolution Data Server went away"
        case 127: "\(program) cannot be started (is chime-eds installed beside chime?)"
        case -1: "chime-eds \(child.ending)"
        default: "chime-eds ended (\(child.ending))"
        }
        mirror.failures = mirror.ready ? 1 : mirror.failures + 1
        if status == -1, !mirror.ready { mirror.crashes += 1 }
        mirror.ready = false
        mirror.problem = why
        mirror.since = mirror.since ?? now
        if mirror.crashes >= Self.crashesBeforeQuarantine {
            mirror.restartAt = nil
            mirror.problem = why + "; crashed \(mirror.crashes) times before the calendar was read, so it is left stopped until `chime config reload`"
            logger.error("EDS calendar \(key.eds): \(mirror.problem!); the alarms it gave keep ringing")
        } else {
            var pause = Self.firstPause
            for _ in 1..<min(mirror.failures, 12) { pause = min(pause + pause, Self.longestPause) }
            mirror.restartAt = now + pause
            logger.warning("EDS calendar \(key.eds): \(why); the alarms it gave keep ringing; trying again in \(pause.seconds) s")
        }
        mirrors[key] = mirror
        changed()
    }

    private func startDue(now: Instant) {
        for (key, mirror) in mirrors {
            guard let at = mirror.restartAt, at <= now, mirror.child == nil else { continue }
            var started = mirror
            started.restartAt = nil
            started.lastError = nil
            do {
                started.child = try children.startStreaming([program, "mirror", key.eds, key.folder], environment: childEnvironment,
                                                            timeLimit: Self.noTimeLimit) { [weak self] child in self?.ended(key, child) }
            } catch {
                started.problem = "\(error)"
                started.since = started.since ?? now
                started.failures += 1
                var pause = Self.firstPause
                for _ in 1..<min(started.failures, 12) { pause = min(pause + pause, Self.longestPause) }
                started.restartAt = now + pause
                logger.error("EDS calendar \(key.eds): \(error)")
            }
            mirrors[key] = started
        }
    }

    /// Why the EDS calendar whose folder is (or holds) `path` is not followed live now, and since
    /// when (nil: it is, or it is not one of EDS's).
    func failure(folder path: String) -> String? {
        guard let mirror = mirrors.values.first(where: { path == $0.wanted.folder || path.hasPrefix($0.wanted.folder + "/") }),
            let problem = mirror.problem
        else { return nil }
        return problem + (mirror.since.map { " (since " + Zone.system().iso8601($0) + ")" } ?? "")
    }

    /// What `chime status` says of each EDS calendar: a line each.
    var notes: [String] {
        mirrors.keys.sorted { $0.eds < $1.eds }.compactMap { key in
            guard let mirror = mirrors[key] else { return nil }
            let name = key.eds == "*" ? "every EDS calendar" : "EDS calendar \"\(key.eds)\""
            if let problem = mirror.problem {
                let since = mirror.since.map { " since " + Zone.system().iso8601($0) } ?? ""
                return "\(name): not followed\(since): \(problem); the alarms it gave keep ringing"
            }
            if !mirror.ready { return "\(name): reading it" }
            let events = mirror.events.values.reduce(0, +)
            var line = "\(name): followed live (\(events) event\(events == 1 ? "" : "s"))"
            if !mirror.gnomeReminders.isEmpty {
                let which = key.eds == "*" ? " \(mirror.gnomeReminders.count) of them" : " it"
                line += "; GNOME's own reminders ring\(which) too: `chime config gnome-reminders off` leaves the ringing to chime"
            }
            return line + (mirror.lastError.map { "; last problem: " + $0 } ?? "")
        }
    }
}
