// chime-simulate: the daemon under a deterministic simulator, checked against a model.
//
//   chime-simulate [--seeds N] [--first S] [--days D] [--jobs J] [--within SECONDS] [--swarm SHARE] [--around DAY]
//                                                                   N seeds from S (default 1000 from 1)
//   chime-simulate --seed S [--days D] [--swarm SHARE]              one seed, its steps and signals printed
//
// --around DAY: every history crosses that day (YYYY-MM-DD, 00:00 UTC, or seconds since the epoch):
// each starts within its length before it (default: a start in 2026 or 2027).
// --swarm: the share of histories that leave some kinds of step out (0.5; 0 draws every history
// from every kind, as before swarm testing: the seeds of older notes).
//   chime-simulate --replay FILE...                                 histories kept as files (Tests/simulation)
//
// A failing seed is shrunk to a short history (steps taken out while it still fails), printed and
// written to .build/simulate/seed-S.steps; kept in Tests/simulation, it is played by `make check`.
import ChimeDaemon
import Foundation
import Timekeeping


nonisolated(unsafe) var arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
    return value
}
let days = Int(option("--days") ?? "") ?? 30
let seeds = Int(option("--seeds") ?? "") ?? 1000
let first = UInt64(option("--first") ?? "") ?? 1
let one = UInt64(option("--seed") ?? "")
let jobs = max(1, Int(option("--jobs") ?? "") ?? ProcessInfo.processInfo.activeProcessorCount)
/// Stop looking after this many seconds (nil: play every seed).
let within = Double(option("--within") ?? "")
if let share = option("--swarm").flatMap(Double.init), (0...1).contains(share) { swarmShare = share }
if let day = option("--around") {
    guard let at = aroundInstant(day) else {
        print("chime-simulate: --around \(day): not a day from 1971 to 2099 (YYYY-MM-DD or seconds since the epoch)")
        exit(64)
    }
    startsAround = at
}
let replay = arguments.first == "--replay" ? Array(arguments.dropFirst()) : nil

nonisolated(unsafe) var plays = 0

/// `--around`'s day: seconds since the epoch, or YYYY-MM-DD at 00:00 UTC; within the range a kept
/// history's start may take (1971 to 2100).
func aroundInstant(_ text: String) -> Int64? {
    let seconds: Int64?
    if let number = Int64(text) {
        seconds = number
    } else {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let y = parts[0], let m = parts[1], let d = parts[2], (1...12).contains(m),
              (1...daysInMonth(y, m)).contains(d) else { return nil }
        seconds = daysFromCivil(y, m, d) * 86_400
    }
    return seconds.flatMap { (86_400 * 366...4_102_444_800).contains($0) ? $0 : nil }
}

/// Plays one history on a fresh store; its failure, if any.
func play(start: Int64, zone: String, steps: [Step], trace: Bool = false) -> Failure? {
    plays += 1
    let runner: Runner
    do {
        runner = try Runner(start: start, zone: zone, steps: steps, storeName: "chime-simulate-\(getpid())-\(plays)", trace: trace)
    } catch {
        return Failure(step: 0, message: "the daemon could not start: \(error)")
    }
    // Its store goes with the last connection to it.
    defer {
        runner.daemon.stopped()
        runner.world.end()
    }
    do {
        try runner.play()
        return nil
    } catch {
        return error
    }
}

/// Takes steps out while the history still fails: halves, then quarters, down to single steps.
func shrink(start: Int64, zone: String, steps: [Step]) -> [Step] {
    var steps = steps
    var chunk = max(1, steps.count / 2)
    while chunk >= 1 {
        var index = 0
        var progressed = false
        while index < steps.count {
            var fewer = steps
            fewer.removeSubrange(index..<min(steps.count, index + chunk))
            if play(start: start, zone: zone, steps: fewer) != nil {
                steps = fewer
                progressed = true
            } else {
                index += chunk
            }
        }
        if !progressed || chunk > 1 { chunk /= 2 } else { chunk = 1; if !progressed { break } }
        if chunk == 0 { break }
        if chunk == 1 && !progressed { break }
    }
    return steps
}

func history(_ start: Int64, _ zone: String, _ steps: [Step]) -> String {
    "# chime-simulate history\nstart \(start) \(zone)\n" + steps.map(\.line).joined(separator: "\n") + "\n"
}

func readHistory(_ path: String) -> (Int64, String, [Step])? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    var start: Int64?, zone = "UTC", steps: [Step] = []
    for line in text.split(separator: "\n").map(String.init) where !line.hasPrefix("#") && !line.isEmpty {
        let words = line.split(separator: " ")
        if words.first == "start", words.count == 3 {
            // From 1970 to 2100, in one of the zones a history moves between.
            start = Int64(words[1]).flatMap { (0...4_102_444_800).contains($0) ? $0 : nil }
            zone = String(words[2])
            guard start != nil, simulatedZones.contains(zone) else {
                print("\(path): not a start: \(line)")
                return nil
            }
        } else if let step = Step(line: line) {
            steps.append(step)
        } else {
            print("\(path): not a step: \(line)")
            return nil
        }
    }
    guard let start else { return nil }
    return (start, zone, steps)
}

func report(seed: UInt64) -> Never {
    let (start, zone, steps) = randomHistory(seed: seed, days: days)
    guard let failure = play(start: start, zone: zone, steps: steps) else {
        print("seed \(seed) passes when played alone")
        exit(1)
    }
    print("seed \(seed) failed at \(failure); shrinking its \(steps.count) steps")
    let shrunk = shrink(start: start, zone: zone, steps: Array(steps.prefix(failure.step + 1)))
    let last = play(start: start, zone: zone, steps: shrunk)
    try? FileManager.default.createDirectory(atPath: ".build/simulate", withIntermediateDirectories: true)
    let path = ".build/simulate/seed-\(seed).steps"
    try? history(start, zone, shrunk).write(toFile: path, atomically: true, encoding: .utf8)
    print("shrunk to \(shrunk.count) steps (\(last.map(\.description) ?? "?")):\n")
    _ = play(start: start, zone: zone, steps: shrunk, trace: true)
    print("\nkept in \(path); replay with: make simulate REPLAY=\(path) (copy it into Tests/simulation to keep it as a regression test)")
    exit(1)
}

if let replay {
    var failed = 0
    for path in replay {
        guard let (start, zone, steps) = readHistory(path) else {
            failed += 1
            continue
        }
        if let failure = play(start: start, zone: zone, steps: steps, trace: replay.count == 1) {
            print("\(path): FAILED at \(failure)")
            failed += 1
        } else {
            print("\(path): passed (\(steps.count) steps)")
        }
    }
    exit(failed == 0 ? 0 : 1)
}

// Seeds played one after another in one process, as a worker plays them (to find what one leaves
// behind for the next).
if let sequence = option("--sequence") {
    for seed in sequence.split(separator: ",").compactMap({ UInt64($0) }) {
        let (start, zone, steps) = randomHistory(seed: seed, days: days)
        print("seed \(seed): \(play(start: start, zone: zone, steps: steps).map(\.description) ?? "passed") (\((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0) descriptors open)")
    }
    exit(0)
}

if let one {
    let (start, zone, steps) = randomHistory(seed: one, days: days)
    let failure = play(start: start, zone: zone, steps: steps, trace: true)
    print(failure.map { "seed \(one) FAILED at \($0)" } ?? "seed \(one) passed (\(steps.count) steps, \(days) days)")
    if failure != nil { report(seed: one) }
    exit(0)
}

// Many seeds, split among `jobs` processes; the first failure found is shrunk and reported.
let began = Date()
var children: [pid_t] = []
var pipes: [Int32] = []
for job in 0..<jobs {
    var fds: [Int32] = [0, 0]
    pipe(&fds)
    let pid = fork()
    if pid == 0 {
        close(fds[0])
        var seed = first + UInt64(job)
        var result = "ok"
        let started = Date()
        while seed < first + UInt64(seeds) {
            if let within, Date().timeIntervalSince(started) > within {
                result = "out of time"
                break
            }
            let (start, zone, steps) = randomHistory(seed: seed, days: days)
            if play(start: start, zone: zone, steps: steps) != nil {
                result = "\(seed)"
                break
            }
            seed += UInt64(jobs)
        }
        _ = result.withCString { write(fds[1], $0, strlen($0)) }
        _exit(0)
    }
    close(fds[1])
    children.append(pid)
    pipes.append(fds[0])
}
// The first failure found stops the other processes: its time is the time to find it.
var failing: [UInt64] = []
var outOfTime = false
var foundAfter: TimeInterval?
var running = Array(zip(children, pipes))
while !running.isEmpty {
    var fds = running.map { pollfd(fd: $0.1, events: Int16(POLLIN), revents: 0) }
    guard poll(&fds, nfds_t(fds.count), -1) > 0 else { continue }
    for (index, polled) in fds.enumerated().reversed() where polled.revents != 0 {
        let (pid, fd) = running.remove(at: index)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, 64)
        close(fd)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let said = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        if said == "out of time" { outOfTime = true }
        guard said != "ok", let seed = UInt64(said) else { continue }
        failing.append(seed)
        if foundAfter == nil {
            foundAfter = Date().timeIntervalSince(began)
            for (other, _) in running { kill(other, SIGTERM) }
        }
    }
}
let took = foundAfter ?? Date().timeIntervalSince(began)
if let seed = failing.min() {
    print("FAILED: seed \(seed) (of \(seeds) from \(first), \(days) simulated days each; \(String(format: "%.1f", took)) s)")
    report(seed: seed)
}
if outOfTime {
    print("no failure found within \(Int(within ?? 0)) s")
    exit(0)
}
print("\(seeds) seeds of \(days) simulated days passed in \(String(format: "%.1f", took)) s on \(jobs) processes (\(String(format: "%.0f", Double(seeds) / took)) seeds/s)")
