// `make bench`: nextFireDate for 100,000 random calendar rules (release build),
// and the cost of one rule whose next fire is a day away vs decades away.
// Prints "parse_seconds next_seconds near_us far_us checksum".
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

final class Random {
    var state: UInt64 = 0x5EED
    func below(_ n: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(n))
    }
}
let generator = Random()
@MainActor func random(_ n: Int) -> Int { generator.below(n) }
func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
@MainActor func field(_ upper: Int, _ lower: Int) -> String {
    switch random(5) {
    case 0, 1: return "*"
    case 2: return two(lower + random(upper - lower + 1))
    case 3: let a = lower + random(upper - lower); return "\(two(a))..\(two(a + 1 + random(upper - a)))"
    default: let step = 1 + random((upper - lower) / 2); return "\(two(lower + random(upper - lower + 1 - step)))/\(step)"
    }
}
let weekdays = ["", "Mon ", "Mon..Fri ", "Sat,Sun ", "Tue,Thu "]
let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"].map { try! Zone.named($0) }

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
var texts: [String] = []
texts.reserveCapacity(count)
for _ in 0..<count {
    texts.append(weekdays[random(weekdays.count)] + "*-\(field(12, 1))-\(field(28, 1)) \(field(23, 0)):\(field(59, 0))")
}
var start = now()
var rules: [CalendarExpression] = []
rules.reserveCapacity(count)
for text in texts { rules.append(try! CalendarExpression(parsing: text)) }
let parseSeconds = now() - start

let base: Int64 = 1_795_000_000  // November 2026
var checksum: Int64 = 0
start = now()
for (i, rule) in rules.enumerated() {
    checksum &+= rule.nextElapse(after: base, in: zones[i % zones.count]) ?? 0
}
let nextSeconds = now() - start

// One rule a day away and one decades away, many times each.
let berlin = zones[0]
let near = try! CalendarExpression(parsing: "*-*-* 12:00")
let far = try! CalendarExpression(parsing: "2090-06-01 12:00")
@MainActor func perCall(_ rule: CalendarExpression) -> (Double, Int64) {
    let runs = 20_000
    var sum: Int64 = 0
    let t0 = now()
    for k in 0..<runs { sum &+= rule.nextElapse(after: base + Int64(k), in: berlin) ?? 0 }
    return ((now() - t0) / Double(runs) * 1e6, sum)
}
let (nearMicros, nearSum) = perCall(near)
let (farMicros, farSum) = perCall(far)
checksum &+= nearSum &+ farSum
print(parseSeconds, nextSeconds, nearMicros, farMicros, checksum != 0 ? 1 : 0)
