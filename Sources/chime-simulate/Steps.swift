// A history the simulator plays: one step a line, so a failing seed's history can be printed,
// shrunk, kept in Tests/simulation and played again. `Step.random` draws a history from a seed.

/// How an alarm of the simulation repeats.
enum AlarmKind: Equatable {
    /// Every day at a wall time in the system's zone.
    case daily(hour: Int, minute: Int)
    /// Monday to Friday at a wall time.
    case weekdays(hour: Int, minute: Int)
    /// Once, `minutes` after it is set (a timer).
    case timer(minutes: Int)
}

/// One thing that happens in the simulated world.
enum Step: Equatable {
    /// `add NAME daily|weekdays HH:MM [ring] [holidays]`, `add NAME in MINUTES [ring]`.
    case add(name: String, kind: AlarmKind, ring: Bool, skipHolidays: Bool)
    /// Time passes with the daemon running (seconds).
    case wait(Int64)
    /// The person presses a button on the alarm's popup.
    case press(name: String, key: String)
    /// The person closes the alarm's popup.
    case close(name: String)
    /// The server lets the alarm's popup expire (takes it down unanswered).
    case expire(name: String)
    /// The alarm was answered on another machine (a calendar's sync says so), now.
    case elsewhere(name: String)
    /// `chime skip` of the alarm's next occurrence.
    case skip(name: String)
    /// `chime remove`.
    case remove(name: String)
    /// `chime off`: away from `in` seconds from now, for `for` seconds.
    case away(in: Int64, for: Int64)
    /// The alarm file's holiday calendar gains the day `days` from today.
    case holiday(days: Int)
    case serverLeaves
    case serverComes
    case mood(String)
    /// The machine sleeps this long, then resumes.
    case sleep(Int64)
    /// The daemon is killed now, and started again after `down` seconds.
    case crash(down: Int64)
    /// The daemon is killed just before its `commits`-th commit from now (whenever that comes),
    /// and started again after `down` seconds.
    case crashAtCommit(commits: Int, down: Int64)
    /// The system's zone changes.
    case zone(String)
    /// The wall clock is set, by seconds either way.
    case jump(Int64)

    var line: String {
        switch self {
        case .add(let name, let kind, let ring, let holidays):
            let what: String = switch kind {
            case .daily(let h, let m): "daily \(two(h)):\(two(m))"
            case .weekdays(let h, let m): "weekdays \(two(h)):\(two(m))"
            case .timer(let minutes): "in \(minutes)"
            }
            return "add \(name) \(what)" + (ring ? " ring" : "") + (holidays ? " holidays" : "")
        case .wait(let s): return "wait \(s)"
        case .press(let name, let key): return "press \(name) \(key)"
        case .close(let name): return "close \(name)"
        case .expire(let name): return "expire \(name)"
        case .elsewhere(let name): return "elsewhere \(name)"
        case .skip(let name): return "skip \(name)"
        case .remove(let name): return "remove \(name)"
        case .away(let start, let length): return "away \(start) \(length)"
        case .holiday(let days): return "holiday \(days)"
        case .serverLeaves: return "server leaves"
        case .serverComes: return "server comes"
        case .mood(let mood): return "mood \(mood)"
        case .sleep(let s): return "sleep \(s)"
        case .crash(let down): return "crash \(down)"
        case .crashAtCommit(let commits, let down): return "crash-at-commit \(commits) \(down)"
        case .zone(let zone): return "zone \(zone)"
        case .jump(let s): return "jump \(s)"
        }
    }

    /// Reads a line `line` wrote; nil: not a step.
    init?(line: String) {
        let words = line.split(separator: " ").map(String.init)
        guard let verb = words.first else { return nil }
        // Spans of at most ten years either way (a kept history is text anyone may edit).
        func int(_ i: Int) -> Int64? {
            guard words.count > i, let value = Int64(words[i]), abs(value) <= 10 * 366 * 86_400 else { return nil }
            return value
        }
        switch verb {
        case "add":
            guard words.count >= 4 else { return nil }
            let kind: AlarmKind
            var rest = 4
            switch words[2] {
            case "daily", "weekdays":
                let parts = words[3].split(separator: ":").compactMap { Int($0) }
                guard parts.count == 2, (0...23).contains(parts[0]), (0...59).contains(parts[1]) else { return nil }
                kind = words[2] == "daily" ? .daily(hour: parts[0], minute: parts[1]) : .weekdays(hour: parts[0], minute: parts[1])
            case "in":
                guard let minutes = Int(words[3]), (1...(366 * 24 * 60)).contains(minutes) else { return nil }
                kind = .timer(minutes: minutes)
            default: return nil
            }
            var ring = false, holidays = false
            while rest < words.count {
                if words[rest] == "ring" { ring = true } else if words[rest] == "holidays" { holidays = true } else { return nil }
                rest += 1
            }
            self = .add(name: words[1], kind: kind, ring: ring, skipHolidays: holidays)
        case "wait": guard let s = int(1), s >= 0 else { return nil }; self = .wait(s)
        case "press": guard words.count == 3 else { return nil }; self = .press(name: words[1], key: words[2])
        case "close": guard words.count == 2 else { return nil }; self = .close(name: words[1])
        case "expire": guard words.count == 2 else { return nil }; self = .expire(name: words[1])
        case "elsewhere": guard words.count == 2 else { return nil }; self = .elsewhere(name: words[1])
        case "skip": guard words.count == 2 else { return nil }; self = .skip(name: words[1])
        case "remove": guard words.count == 2 else { return nil }; self = .remove(name: words[1])
        case "away": guard let a = int(1), a >= 0, let b = int(2), b > 0 else { return nil }; self = .away(in: a, for: b)
        case "holiday": guard let d = int(1), abs(d) <= 3660 else { return nil }; self = .holiday(days: Int(d))
        case "server": self = words.count == 2 && words[1] == "leaves" ? .serverLeaves : .serverComes
        case "mood": guard words.count == 2 else { return nil }; self = .mood(words[1])
        case "sleep": guard let s = int(1), s >= 0 else { return nil }; self = .sleep(s)
        case "crash": guard let d = int(1), d >= 0 else { return nil }; self = .crash(down: d)
        case "crash-at-commit": guard let c = int(1), c >= 0, let d = int(2), d >= 0 else { return nil }; self = .crashAtCommit(commits: Int(c), down: d)
        case "zone": guard words.count == 2, simulatedZones.contains(words[1]) else { return nil }; self = .zone(words[1])
        case "jump": guard let s = int(1) else { return nil }; self = .jump(s)
        default: return nil
        }
    }
}

func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

/// SplitMix64: small, fast, and the same on every machine.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The zones a history moves between: with and without summer time, either side of UTC.
let simulatedZones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "UTC"]

/// A history of `days` simulated days drawn from `seed`: alarms set and answered, and the world's
/// faults among them.
/// The kinds of step, by the roll that draws each (below); the first, waiting, is in every history.
private let stepKinds: [Range<Int>] = [
    0..<40, 40..<52, 52..<54, 54..<56, 56..<59, 59..<63, 63..<65, 65..<69, 69..<71, 71..<74, 74..<81, 81..<84, 84..<87, 87..<92,
    92..<95, 95..<98,
]

/// The share of histories that leave some kinds of step out (`--swarm`).
nonisolated(unsafe) var swarmShare = 0.5
/// Where the histories' days end (`--around`): each starts within its length before this instant, so
/// every history crosses it (a leap day, 2038-01-19 03:14:07 UTC, a change of summer time). Nil: a start
/// in 2026 or 2027.
nonisolated(unsafe) var startsAround: Int64?

func randomHistory(seed: UInt64, days: Int) -> (start: Int64, zone: String, steps: [Step]) {
    var random = SeededRandom(seed: seed)
    // A start in 2026 or 2027, at any second: summer time's changes fall inside some months. Or,
    // around a day asked for, within the history's length before it.
    let start = startsAround.map { $0 - Int64.random(in: 0..<max(1, Int64(days) * 86_400), using: &random) }
        ?? Int64(1_767_225_600) + Int64.random(in: 0..<(2 * 365 * 86_400), using: &random)
    let zone = simulatedZones.randomElement(using: &random)!
    // Swarm testing (Groce et al., ISSTA 2012): a share of the histories leave out each kind of
    // step but waiting with even odds, so the kinds kept meet more often, and nothing of the
    // others masks what they do together.
    var leftOut: [Range<Int>] = []
    if swarmShare > 0, Double.random(in: 0..<1, using: &random) < swarmShare {
        leftOut = stepKinds.dropFirst().filter { _ in Bool.random(using: &random) }
    }
    var steps: [Step] = []
    var names: [String] = []
    var elapsed: Int64 = 0
    let end = Int64(days) * 86_400
    var crashes = 0
    func newAlarm() {
        let name = "a\(names.count + 1)"
        names.append(name)
        let hour = Int.random(in: 5...23, using: &random), minute = Int.random(in: 0...59, using: &random)
        let kind: AlarmKind = switch Int.random(in: 0..<3, using: &random) {
        case 0: .daily(hour: hour, minute: minute)
        case 1: .weekdays(hour: hour, minute: minute)
        default: .timer(minutes: Int.random(in: 1...(3 * 24 * 60), using: &random))
        }
        steps.append(.add(name: name, kind: kind, ring: Bool.random(using: &random), skipHolidays: Bool.random(using: &random)))
    }
    for _ in 0..<Int.random(in: 2...5, using: &random) { newAlarm() }
    while elapsed < end {
        let roll = Int.random(in: 0..<100, using: &random)
        if leftOut.contains(where: { $0.contains(roll) }) { continue }
        let name = names.randomElement(using: &random)!
        switch roll {
        case 0..<40:
            // Mostly short waits (into a ring), some long ones.
            let wait = Bool.random(using: &random) ? Int64.random(in: 1...600, using: &random) : Int64.random(in: 600...(2 * 86_400), using: &random)
            steps.append(.wait(wait))
            elapsed += wait
        case 40..<52: steps.append(.press(name: name, key: Bool.random(using: &random) ? "snooze" : "dismiss"))
        case 52..<54: steps.append(.close(name: name))
        case 54..<56: steps.append(.expire(name: name))
        case 56..<59: steps.append(.elsewhere(name: name))
        case 59..<63: steps.append(.skip(name: name))
        case 63..<65: steps.append(.remove(name: name))
        case 65..<69: newAlarm()
        case 69..<71: steps.append(.away(in: Int64.random(in: 0...(3 * 86_400), using: &random), for: Int64.random(in: 3600...(4 * 86_400), using: &random)))
        case 71..<74: steps.append(.holiday(days: Int.random(in: 0...10, using: &random)))
        case 74..<77: steps.append(.serverLeaves)
        case 77..<81: steps.append(.serverComes)
        case 81..<84: steps.append(.mood(["answering", "answering", "slow", "refusing", "hanging"].randomElement(using: &random)!))
        case 84..<87:
            // A laptop closed for the night, or a phone that sleeps on its own between two looks.
            let sleep = Bool.random(using: &random) ? Int64.random(in: 60...(20 * 3600), using: &random) : Int64.random(in: 2...300, using: &random)
            steps.append(.sleep(sleep))
            elapsed += sleep
        case 87..<92 where crashes < 2:
            crashes += 1
            let down = Bool.random(using: &random) ? 0 : Int64.random(in: 1...(6 * 3600), using: &random)
            steps.append(Bool.random(using: &random) ? .crash(down: down) : .crashAtCommit(commits: Int.random(in: 0...6, using: &random), down: down))
        case 92..<95: steps.append(.zone(simulatedZones.randomElement(using: &random)!))
        case 95..<98: steps.append(.jump(Int64.random(in: -3 * 3600...(6 * 3600), using: &random)))
        default: break
        }
    }
    return (start, zone, steps)
}
