// `make bench`: the alarm file (issue 5).
//   chime-bench-config load FILE N RUNS
//     writes an N-alarm file to FILE, then loads and validates it RUNS times in-process;
//     prints "load_median_ms load_min_ms parse_median_ms alarms bytes".
//   chime-bench-config reload CHIME DIR N RUNS
//     on the session bus (a private one, from scripts/bench.sh): `chime daemon` follows an
//     N-alarm file in DIR; times the first load, RUNS reloads of the unchanged file and RUNS
//     reloads that each change one alarm (ReloadAlarmFile over D-Bus, round trip), and after
//     each change compares the whole store with the one before it;
//     prints "first_load_ms reload_unchanged_median_ms reload_one_median_ms rows_changed_max rows_total".
//   chime-bench-config phases FILE
//     where one load's time goes (TOML parsing, rules, JSON encoding); for looking into it.
import ChimeCenter
import ChimeClient
import ChimeConfig
import ChimeDaemon
import DBus
import Foundation  // String(format:), for printing figures
import Timekeeping
import TOMLKit
#if canImport(Glibc)
import Glibc
#endif

func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// A varied file of `count` alarms: weekday times, weekly habits, calendar expressions, one-offs,
/// zones, sounds, actions, body commands, disabled ones.
func alarmFile(count: Int, changed: Int? = nil, generation: Int = 0) -> String {
    var text = """
        # \(count) alarms for the benchmark
        [defaults]
        sound = "bell"
        urgency = "critical"
        snooze = "5m"
        actions = ["snooze", "dismiss"]


        """
    let days = ["mon-fri", "mon,wed,fri", "sat,sun", "tue", "weekdays", "weekends"]
    for i in 0..<count {
        // Spread so that rules repeat about as little as in a real file.
        let k = i &* 7919
        let hour = k % 24, minute = (k / 24) % 60, second = (k / 1440) % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let when: String
        switch i % 5 {
        case 0: when = "\(hour):\(two(minute)) \(days[(i / 5) % days.count])"
        case 1: when = "*-*-* \(two(hour)):\(two(minute)):\(two(second))"
        case 2: when = "20\(30 + k % 60)-\(two(k % 12 + 1))-\(two(k % 28 + 1)) \(two(hour)):\(two(minute))"
        case 3: when = "Mon..Fri *-*-* \(two(hour)):\(two(minute))"
        default: when = "*:\(minute % 15)/\(15 + i % 30)"
        }
        text += "[[alarm]]\n"
        text += "label = \"Alarm number \(i)\"\n"
        text += "when = \"\(changed == i ? "23:\(10 + generation % 50) sun" : when)\"\n"
        text += "title = \"Reminder \(i)\(changed == i ? " (edit \(generation))" : "")\"\n"
        text += "body = \"Something to do, number \(i), with \\\"quotes\\\" and ünïcödé\"\n"
        if i % 3 == 0 { text += "tz = \"Europe/Berlin\"\n" }
        if i % 4 == 0 { text += "urgency = \"normal\"\n" }
        if i % 10 == 0 { text += "body-command = [\"date\", \"+%H:%M\"]\nbody-timeout = \"3s\"\n" }
        if i % 50 == 0 { text += "enabled = false\n" }
        text += "\n"
    }
    return text
}

func write(_ text: String, to path: String) {
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(fd >= 0, "cannot write \(temporary)")
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        precondition(n > 0)
        written += n
    }
    close(fd)
    precondition(rename(temporary, path) == 0)
}

func load(_ arguments: [String]) {
    let path = arguments[0]
    let count = Int(arguments[1])!
    let runs = Int(arguments[2])!
    let text = alarmFile(count: count)
    write(text, to: path)
    let anchor = WallClock.system.now()
    var loads: [Double] = []
    var parses: [Double] = []
    var alarms = 0
    for _ in 0..<runs {
        let start = monotonic()
        let file = AlarmConfig.load(path: path, anchor: anchor)
        loads.append((monotonic() - start) * 1000)
        precondition(file.isValid, "the generated file has errors: \(file.diagnostics.prefix(3))")
        alarms = file.alarms.count
        // TOML parsing alone (TOMLKit, toml++), for the breakdown.
        let parseStart = monotonic()
        _ = try! TOMLTable(string: text)
        parses.append((monotonic() - parseStart) * 1000)
    }
    print(String(format: "%.2f %.2f %.2f %d %d", median(loads), loads.min()!, median(parses), alarms, text.utf8.count))
}

func spawn(_ argv: [String]) -> pid_t {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let args = argv.map { strdup($0) } + [nil]
    defer { args.forEach { free($0) } }
    guard posix_spawn(&pid, argv[0], &actions, nil, args, environ) == 0 else { fatalError("cannot start \(argv[0])") }
    return pid
}

/// Every pending row as the daemon stored it: request, next fire, last fired.
struct Row: Equatable {
    var request: String
    var nextFire: Instant?
    var lastFired: Instant?
}

func snapshot(_ directory: String) -> [String: Row] {
    let store = try! Store(directory: directory, now: WallClock.system.now())
    var rows: [String: Row] = [:]
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    for time in try! store.scheduledTimes() {
        let request = try! store.request(withIdentifier: time.identifier)!
        rows[time.identifier] = Row(request: String(decoding: try! encoder.encode(request), as: UTF8.self),
                                    nextFire: time.nextFire, lastFired: time.lastFired)
    }
    return rows
}

/// Rows the reload changed: a different request, or a different next fire that no firing explains
/// (an alarm that came due meanwhile moved on by itself, with its last fired time).
func changedByReload(_ before: [String: Row], _ after: [String: Row]) -> [String] {
    Set(before.keys).union(after.keys).filter { id in
        guard let old = before[id], let new = after[id] else { return true }
        return old.request != new.request || old.nextFire != new.nextFire && old.lastFired == new.lastFired
    }.sorted()
}

func reload(_ arguments: [String]) throws {
    let chime = arguments[0]
    let directory = arguments[1]
    let count = Int(arguments[2])!
    let runs = Int(arguments[3])!
    let path = directory + "/alarms.toml"
    let state = directory + "/state"
    write(alarmFile(count: count), to: path)
    let connection = try Connection(.session)
    let center = UserNotificationCenter(connection: connection)
    let start = monotonic()
    let daemon = spawn([chime, "daemon", "--config", path, "--state-dir", state])
    defer { kill(daemon, SIGTERM); var status: Int32 = 0; waitpid(daemon, &status, 0) }
    // Ready once the name is taken and the file's alarms are in (the first load comes before the loop).
    var firstLoad = 0.0
    while true {
        if let status = try? center.alarmFileStatus(), status.loaded != nil {
            firstLoad = (monotonic() - start) * 1000
            break
        }
        precondition(monotonic() - start < 60, "the daemon did not load the file")
        usleep(2_000)
    }
    var unchanged: [Double] = []
    for _ in 0..<runs {
        let t = monotonic()
        _ = try center.reloadAlarmFile()
        unchanged.append((monotonic() - t) * 1000)
    }
    var oneChanged: [Double] = []
    var changedMax = 0
    var total = 0
    for run in 0..<runs {
        let before = snapshot(state)
        // An enabled alarm (every 50th is disabled, and has no pending row to change).
        var victim = (run * 7919 + 1) % count
        if victim % 50 == 0 { victim += 1 }
        // The daemon's inotify watch would also see this; the explicit reload applies it first
        // and the watch's reload then finds nothing changed.
        write(alarmFile(count: count, changed: victim, generation: run), to: path)
        let t = monotonic()
        let status = try center.reloadAlarmFile()
        oneChanged.append((monotonic() - t) * 1000)
        precondition(status.problems.isEmpty, "\(status.problems.prefix(3))")
        usleep(200_000)  // let the watch's own reload pass
        let after = snapshot(state)
        let differing = changedByReload(before, after)
        let expected = "alarm-number-\(victim)"
        precondition(differing.contains(expected), "the edited alarm \(expected) did not change: \(differing)")
        changedMax = max(changedMax, differing.count)
        total = after.count
        // Put the alarm back for the next round (not measured).
        write(alarmFile(count: count), to: path)
        _ = try center.reloadAlarmFile()
        usleep(200_000)
    }
    print(String(format: "%.1f %.2f %.2f %d %d", firstLoad, median(unchanged), median(oneChanged), changedMax, total))
}

/// Where the time of one load goes (for looking into it; not part of `make bench`).
func phases(_ path: String) {
    let fd = open(path, O_RDONLY)
    var bytes = [UInt8](repeating: 0, count: 4 << 20)
    let n = read(fd, &bytes, bytes.count)
    close(fd)
    bytes.removeLast(bytes.count - n)
    let text = String(decoding: bytes, as: UTF8.self)
    let whens = text.split(separator: "\n").filter { $0.hasPrefix("when = ") }.map { String($0.dropFirst(8).dropLast()) }
    for _ in 0..<5 {
        var t = monotonic()
        _ = try! TOMLTable(string: text)
        let toml = monotonic() - t
        t = monotonic()
        for when in whens { _ = try! Rule(parsing: when) }
        let rules = monotonic() - t
        t = monotonic()
        _ = AlarmConfig.parse(bytes, path: path, anchor: .epoch)
        let all = monotonic() - t
        let file = AlarmConfig.parse(bytes, path: path, anchor: .epoch)
        t = monotonic()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for alarm in file.alarms { _ = try! encoder.encode(alarm.request) }
        let sorted = monotonic() - t
        t = monotonic()
        let plain = JSONEncoder()
        for alarm in file.alarms { _ = try! plain.encode(alarm.request) }
        let unsorted = monotonic() - t
        print(String(format: "toml %.1f ms, %d rules %.1f ms, whole load %.1f ms, encode sorted %.1f ms, plain %.1f ms",
                     toml * 1000, whens.count, rules * 1000, all * 1000, sorted * 1000, unsorted * 1000))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "phases" where arguments.count == 2: phases(arguments[1])
case "load" where arguments.count == 4: load(Array(arguments.dropFirst()))
case "reload" where arguments.count == 5: try reload(Array(arguments.dropFirst()))
default:
    print("usage: chime-bench-config load FILE N RUNS | reload CHIME DIR N RUNS")
    exit(64)
}
