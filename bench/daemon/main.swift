// `make bench`: the scheduler daemon with many alarms. Run on a private bus (scripts/bench.sh).
//   chime-bench-daemon CHIME N IDLE_SECONDS
// Prints "startup_s list_s add_median_ms add_p99_ms rss_kib idle_switches".
import ChimeCenter
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
        let text = String(cString: line)
        if text.hasPrefix(field + ":") {
            let rest = text.dropFirst(field.count + 1)
            let digits = rest.filter { $0.isNumber }
            return Int(String(digits)) ?? -1
        }
    }
    return -1
}

let arguments = CommandLine.arguments
let chime = arguments[1]
let count = Int(arguments[2]) ?? 100_000
let idleSeconds = UInt32(arguments[3]) ?? 60
let stateDirectory = "/tmp/chime-bench-daemon-\(getpid())"
defer { _ = system("rm -rf \(stateDirectory)") }

// The alarms, written as one snapshot (adding them one by one, each fsynced, would take minutes).
let base = Int64(time(nil))
var state = StoreState()
for i in 0..<count {
    let rule = ["16:35 mon-fri", "Mon 07:00", "*-*-01 09:00", "2099-12-24 18:00", "*:0/15"][i % 5]
    // Far from now, so nothing fires while measuring.
    let trigger = i % 5 == 4
        ? Trigger(rule: .instant(base + 86_400 * 365 + Int64(i)), repeats: false, timeZone: "UTC", anchor: base)
        : try! Trigger(parsing: rule == "*:0/15" ? "2098-01-01 00:00" : rule, timeZone: "UTC", anchor: base)
    state.schedule.add(NotificationRequest(identifier: "alarm-\(i)", content: NotificationContent(title: "Alarm \(i)", label: "bench"), trigger: trigger))
}
let store = try! Store(directory: stateDirectory, now: base)
try! store.replaceAll(with: state)

let connection = try! Connection(.session)
var start = now()
let daemon = spawn([chime, "daemon", "--state-dir", stateDirectory])
while (try? connection.nameHasOwner(SchedulerInterface.busName)) != true { usleep(1000) }
// Ready means answering: the first list call returns once start-up is done.
let center = UserNotificationCenter(connection: connection)
_ = try! center.removePendingNotificationRequests(withIdentifiers: ["no-such-alarm"])
let startup = now() - start

start = now()
let lister = spawn([chime, "list", "--json"])
var listStatus: Int32 = 0
waitpid(lister, &listStatus, 0)
let listSeconds = now() - start

var adds: [Double] = []
for i in 0..<200 {
    let request = NotificationRequest(identifier: "extra-\(i)", content: NotificationContent(title: "Extra"),
                                      trigger: Trigger(rule: .instant(base + 86_400 * 400), repeats: false, timeZone: nil, anchor: base))
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
print(startup, listSeconds, adds[adds.count / 2], adds[adds.count * 99 / 100], rss, after - before, listStatus)
