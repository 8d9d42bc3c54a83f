// `make bench`: the scheduler daemon. Run on a private bus (scripts/bench.sh).
//   chime-bench-daemon CHIME N IDLE_SECONDS
//     with N alarms: prints "startup_s list_s add_median_ms add_p99_ms peak_rss_kib idle_switches list_status
//     startup_rss_kib".
//   chime-bench-daemon lateness CHIME SERVER N SPACING_MS
//     N alarms SPACING_MS apart, received by SERVER (bench/c/trivial_server.c --log);
//     prints "lateness_p50_ms lateness_p99_ms lateness_max_ms received".
//   chime-bench-daemon hung CHIME SERVER RUNS
//     SERVER --hang never answers Notify; once an alarm's Notify hangs, times RUNS whole-process
//     `chime list` and `chime in 1h` (alternated); prints "list_median_ms list_max_ms in_median_ms in_max_ms".
//   chime-bench-daemon slow CHIME SERVER N
//     SERVER --delay 2000 answers each Notify 2 s late; N alarms 1 s apart, each due while the one
//     before is unanswered; prints the lateness of alarms 2...N: "p50_ms max_ms received".
import ChimeCenter
import ChimeClient
import ChimeDaemon
import DBus
import FoundationEssentials
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func spawn(_ argv: [String], quiet: Bool = true) -> pid_t {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    if quiet { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
    if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
    let args = argv.map { strdup($0) } + [nil]
    defer { args.forEach { free($0) } }
    var environment: [UnsafeMutablePointer<CChar>?] = []
    var e = environ
    while let entry = e.pointee { environment.append(entry); e += 1 }
    environment.append(nil)
    guard posix_spawn(&pid, argv[0], &actions, nil, args, environment) == 0 else { fatalError("cannot start \(argv[0])") }
    return pid
}

func status(_ pid: pid_t, _ field: String) -> Int {
    guard let f = fopen("/proc/\(pid)/status", "r") else { return -1 }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, 512, f) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix(field + ":") {
            let rest = text.dropFirst(field.count + 1)
            let digits = rest.filter { $0.isNumber }
            return Int(String(digits)) ?? -1
        }
    }
    return -1
}

func wallNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func readText(_ path: String) -> String {
    guard let f = fopen(path, "r") else { return "" }
    defer { fclose(f) }
    var out = ""
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, 4096, f) != nil { out += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    return out
}

/// Lateness: from each alarm's due time to the server receiving its Notify.
func lateness(chime: String, server: String, count: Int, spacingMilliseconds: Int64) -> Never {
    let (serverPID, daemon, log, directory) = startServerAndDaemon(chime: chime, server: server, flags: [], name: "lateness")
    let center = UserNotificationCenter(connection: try! Connection(.session))
    let first = wallNanoseconds() + 2_000_000_000 + Int64(count) * 1_000_000
    let times = (0..<count).map { first + Int64($0) * spacingMilliseconds * 1_000_000 }
    var late = Array(latenessOfAlarms(center, log: log, named: "late", at: times, waitingAfterLast: 10_000_000_000).values)
    stop([daemon, serverPID], removing: directory)
    late.sort()
    guard !late.isEmpty else { print("nan nan nan 0"); exit(1) }
    print(late[late.count / 2], late[min(late.count - 1, late.count * 99 / 100)], late.last!, late.count)
    exit(late.count == count ? 0 : 1)
}

/// Starts `server` with `flags` and the daemon on a fresh state directory; returns both, the
/// server's log and the directory.
func startServerAndDaemon(chime: String, server: String, flags: [String], name: String) -> (server: pid_t, daemon: pid_t, log: String, directory: String) {
    let directory = "/tmp/chime-bench-\(name)-\(getpid())"
    mkdir(directory, 0o700)
    let log = directory + "/server.log"
    let serverPID = spawnLogging([server, "--log"] + flags, to: log)
    while !readText(log).hasPrefix("ready") { usleep(1000) }
    let connection = try! Connection(.session)
    let daemon = spawn([chime, "daemon", "--no-config", "--state-dir", directory + "/state"])
    while (try? connection.nameHasOwner(SchedulerInterface.busName)) != true { usleep(1000) }
    return (serverPID, daemon, log, directory)
}

func stop(_ pids: [pid_t], removing directory: String) {
    for pid in pids {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
    _ = system("rm -rf \(directory)")
}

func addOneOff(_ center: UserNotificationCenter, _ title: String, at nanoseconds: Int64) {
    let instant = Instant(nanosecondsSinceEpoch: nanoseconds)
    try! center.add(NotificationRequest(identifier: title, content: NotificationContent(title: title),
                                        trigger: Trigger(rule: .instant(instant), repeats: false, timeZone: "UTC", anchor: instant)))
}

/// Adds one-off alarms `NAME-0`, `NAME-1`, ... due at `times` (nanoseconds), waits until the
/// server's log (`trivial_server --log`) has them all or `waitingAfterLast` has passed after the
/// last, and returns each received alarm's lateness in milliseconds, due time to receipt.
func latenessOfAlarms(_ center: UserNotificationCenter, log: String, named name: String, at times: [Int64],
                      waitingAfterLast: Int64) -> [String: Double] {
    var due: [String: Int64] = [:]
    for (i, at) in times.enumerated() {
        addOneOff(center, "\(name)-\(i)", at: at)
        due["\(name)-\(i)"] = at
    }
    var lines: [Substring] = []
    while wallNanoseconds() < (times.last ?? 0) + waitingAfterLast {
        lines = readText(log).split(separator: "\n").dropFirst().map { $0 }
        if lines.count >= times.count { break }
        usleep(50_000)
    }
    var late: [String: Double] = [:]
    for line in lines {
        let parts = line.split(separator: " ")
        guard parts.count == 2, let at = due[String(parts[0])], let received = Int64(parts[1]) else { continue }
        late[String(parts[0])] = Double(received - at) / 1e6
    }
    return late
}

/// Whole-process wall time of `argv`, in milliseconds.
func timed(_ argv: [String]) -> Double {
    let start = now()
    let pid = spawn(argv)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return (now() - start) * 1000
}

/// A server that never answers Notify: clients of the daemon must not notice.
func hung(chime: String, server: String, runs: Int) -> Never {
    let (serverPID, daemon, log, directory) = startServerAndDaemon(chime: chime, server: server, flags: ["--hang"], name: "hung")
    let center = UserNotificationCenter(connection: try! Connection(.session))
    addOneOff(center, "hung", at: wallNanoseconds() + 1_000_000_000)
    while !readText(log).contains("hung ") { usleep(10_000) }  // its Notify is in flight, unanswered
    var list: [Double] = []
    var add: [Double] = []
    for _ in 0..<runs {
        list.append(timed([chime, "list"]))
        add.append(timed([chime, "in", "1h", "Tea"]))
    }
    stop([daemon, serverPID], removing: directory)
    list.sort()
    add.sort()
    print(list[list.count / 2], list.last!, add[add.count / 2], add.last!)
    exit(0)
}

/// A server that answers each Notify 2 s late: the alarms after it must still reach it on time.
func slow(chime: String, server: String, count: Int) -> Never {
    let (serverPID, daemon, log, directory) = startServerAndDaemon(chime: chime, server: server, flags: ["--delay", "2000"], name: "slow")
    let center = UserNotificationCenter(connection: try! Connection(.session))
    let first = wallNanoseconds() + 2_000_000_000
    let times = (0..<count).map { first + Int64($0) * 1_000_000_000 }
    var measured = latenessOfAlarms(center, log: log, named: "slow", at: times, waitingAfterLast: 5_000_000_000)
    // The first alarm has no unanswered alarm before it: the others are what is measured.
    measured["slow-0"] = nil
    var late = Array(measured.values)
    stop([daemon, serverPID], removing: directory)
    late.sort()
    guard !late.isEmpty else { print("nan nan 0"); exit(1) }
    print(late[late.count / 2], late.last!, late.count + 1)
    exit(late.count == count - 1 ? 0 : 1)
}

func spawnLogging(_ argv: [String], to path: String) -> pid_t {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let args = argv.map { strdup($0) } + [nil]
    defer { args.forEach { free($0) } }
    guard posix_spawn(&pid, argv[0], &actions, nil, args, environ) == 0 else { fatalError("cannot start \(argv[0])") }
    return pid
}

let arguments = CommandLine.arguments
if arguments[1] == "hung" { hung(chime: arguments[2], server: arguments[3], runs: Int(arguments[4]) ?? 20) }
if arguments[1] == "slow" { slow(chime: arguments[2], server: arguments[3], count: Int(arguments[4]) ?? 10) }
if arguments[1] == "lateness" {
    lateness(chime: arguments[2], server: arguments[3], count: Int(arguments[4]) ?? 200,
             spacingMilliseconds: Int64(arguments[5]) ?? 5)
}
let chime = arguments[1]
let count = Int(arguments[2]) ?? 100_000
let idleSeconds = UInt32(arguments[3]) ?? 60
let stateDirectory = "/tmp/chime-bench-daemon-\(getpid())"
defer { _ = system("rm -rf \(stateDirectory)") }

// The alarms, written in one transaction (adding them one by one, each fsynced, would take minutes).
let base = WallClock.system.now().wholeSecond
var requests: [(request: NotificationRequest, nextFire: Instant?)] = []
for i in 0..<count {
    let rule = ["16:35 mon-fri", "Mon 07:00", "*-*-01 09:00", "2099-12-24 18:00", "*:0/15"][i % 5]
    // Far from now, so nothing fires while measuring.
    let trigger = i % 5 == 4
        ? Trigger(rule: .instant(base + .seconds(86_400 * 365 + Int64(i))), repeats: false, timeZone: "UTC", anchor: base)
        : try! Trigger(parsing: rule == "*:0/15" ? "2098-01-01 00:00" : rule, timeZone: "UTC", anchor: base)
    let request = NotificationRequest(identifier: "alarm-\(i)", content: NotificationContent(title: "Alarm \(i)", label: "bench"), trigger: trigger)
    requests.append((request, trigger.nextFire(after: base)))
}
let store = try! Store(directory: stateDirectory, now: base)
try! store.add(contentsOf: requests)
requests = []

let connection = try! Connection(.session)
var start = now()
let daemon = spawn([chime, "daemon", "--state-dir", stateDirectory])
while (try? connection.nameHasOwner(SchedulerInterface.busName)) != true { usleep(1000) }
// Ready means answering: the first list call returns once start-up is done.
let center = UserNotificationCenter(connection: connection)
_ = try! center.removePendingNotificationRequests(withIdentifiers: ["no-such-alarm"])
let startup = now() - start
let startupRSS = status(daemon, "VmRSS")

start = now()
let lister = spawn([chime, "list", "--json"])
var listStatus: Int32 = 0
waitpid(lister, &listStatus, 0)
let listSeconds = now() - start

var adds: [Double] = []
for i in 0..<200 {
    let request = NotificationRequest(identifier: "extra-\(i)", content: NotificationContent(title: "Extra"),
                                      trigger: Trigger(rule: .instant(base + .seconds(86_400 * 400)), repeats: false, timeZone: nil, anchor: base))
    let t0 = now()
    try! center.add(request)
    adds.append((now() - t0) * 1000)
}
adds.sort()
let rss = status(daemon, "VmHWM")

// Idle: nothing is due; count the daemon's context switches over the period.
let before = status(daemon, "voluntary_ctxt_switches") + status(daemon, "nonvoluntary_ctxt_switches")
sleep(idleSeconds)
let after = status(daemon, "voluntary_ctxt_switches") + status(daemon, "nonvoluntary_ctxt_switches")

kill(daemon, SIGTERM)
var daemonStatus: Int32 = 0
waitpid(daemon, &daemonStatus, 0)
print(startup, listSeconds, adds[adds.count / 2], adds[adds.count * 99 / 100], rss, after - before, listStatus, startupRSS)
