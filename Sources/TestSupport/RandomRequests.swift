// Random and extreme requests as `Add` takes them: documented keys and typos, every
// integer type, boundary numbers, rules that fire soon, in the past or never, hostile text.
import DBus
import Timekeeping

public enum RandomRequests {
    /// Every key of a request (docs/dbus-interface.md), a typo, an empty key and one `Add` refuses.
    public static let keys = [
        "id", "title", "subtitle", "body", "label", "icon", "category", "urgency", "sound", "sound-file", "body-markup",
        "actions", "user-info", "expire", "persistent", "snooze", "grace", "body-command", "body-timeout",
        "body-output-limit", "rule", "at", "repeats", "time-zone", "ring", "auto-snooze", "wake", "dnd", "snoze", "", "anchor",
    ]

    /// Numbers at and around every bound.
    public static let numbers: [Int64] = [
        0, 1, -1, 59, 60, 61, 86_399, 86_400, 86_401, 604_800, 604_801, 31_622_400, 31_622_401, 315_360_000, 315_360_001,
        Int64(Int32.max), Int64(UInt32.max), .max, .min, 7_258_118_399, 7_258_118_400,
    ]

    /// Text at and around every bound, and text libdbus or a terminal would choke on.
    public static let strings = [
        "", "x", "in 5m", "every 1h", "16:35 mon-fri", "2020-01-01 10:00", "2199-12-31 23:59:59", "2200-01-01 00:00",
        "*-02-30 00:00", "Mon..Fri *-*-* 16:35", "../../etc/passwd", "/etc/passwd", "UTC", "Europe/Berlin", "Mars/Olympus",
        "a\u{0}b", "\u{7}bell", "two\nlines", "\u{1b}[31mred", String(repeating: "9", count: 400), "in 99999999999999999999s",
        "in 15000w", "in 3650d", "low", "critical", "default", "bell", "/usr/share/sounds/x.oga", "ünïcödé ⏰ 🥚",
        String(repeating: "x", count: 201), String(repeating: "y", count: 1025), String(repeating: "z", count: 70_000),
    ]

    /// Rules that fire within a few seconds of being added.
    public static let soonRules = ["in 1s", "in 2s", "in 3s"]

    /// A random request dictionary; `title` (when given) is put in most of them, so a
    /// test can find the request again by it.
    public static func entries(_ r: inout SplitMix, now: Instant, title: String? = nil) -> [(String, Value)] {
        var pairs: [(String, Value)] = []
        for _ in 0..<(r.below(6)) {
            let key = keys[r.below(keys.count)]
            pairs.append((key, value(&r, now: now)))
        }
        if let title, r.below(10) < 8 { pairs.append(("title", .string(title))) }
        switch r.below(4) {
        case 0: pairs.append(("rule", .string(soonRules[r.below(soonRules.count)])))
        case 1: pairs.append(("rule", .string(strings[r.below(strings.count)])))
        case 2: pairs.append(("at", .int64(now.seconds + Int64(r.below(4)) - 1)))
        default: break
        }
        return pairs
    }

    /// A value of a type a request key might take, or might wrongly be given.
    public static func value(_ r: inout SplitMix, now: Instant) -> Value {
        let n = numbers[r.below(numbers.count)]
        return switch r.below(9) {
        case 0: .int64(n)
        case 1: .uint32(UInt32(truncatingIfNeeded: n))
        case 2: .int32(Int32(truncatingIfNeeded: n))
        case 3: .uint64(UInt64(bitPattern: n))
        case 4: .boolean(r.below(2) == 0)
        case 5: .strings((0..<r.below(3)).map { _ in strings[r.below(strings.count)] })
        case 6: .array(element: .structure([.string, .string]), [.structure([.string(strings[r.below(strings.count)]), .string("T")])])
        case 7: randomValue(&r, depth: 2)
        default: .string(strings[r.below(strings.count)])
        }
    }

    /// A request that should pass: every key within its bound, values drawn from the edges
    /// of each bound (a test checks it is accepted, listed and fired like any other).
    public static func valid(_ r: inout SplitMix, now: Instant, title: String) -> [(String, Value)] {
        var pairs: [(String, Value)] = [("title", .string(title))]
        let rules = soonRules + ["in 1h", "every 1h", "in 3650d", "16:35 mon-fri", "*:0/15", "2199-12-31 23:59:59", "Mon..Fri *-*-* 07:00"]
        if r.below(5) == 0 {
            pairs.append(("at", .int64(now.seconds + 2 + Int64(r.below(2)))))
        } else {
            pairs.append(("rule", .string(rules[r.below(rules.count)])))
        }
        let optional: [(String, [Value])] = [
            ("id", [.string("v-\(title)"), .string(longIDPrefix + title.suffix(10))]),
        ] + validOptional
        for (key, choices) in optional where r.below(4) == 0 {
            pairs.append((key, choices[r.below(choices.count)]))
        }
        return pairs
    }

    /// The optional keys of `valid` but its id, each with its choices: made once (a 64 KiB body made
    /// anew for each request was an eighth of a 10,000-request test's time).
    private static let longIDPrefix = String(repeating: "i", count: 190)
    private static let validOptional: [(String, [Value])] = [
        ("subtitle", [.string(""), .string(String(repeating: "s", count: 1024))]),
        ("body", [.string("two\nlines\tand a tab"), .string(String(repeating: "b", count: 65_536))]),
        ("label", [.string("homeroom"), .string(String(repeating: "l", count: 200))]),
        ("urgency", [.string("low"), .string("critical")]),
        ("sound", [.string("bell"), .string("default")]),
        ("actions", [.array(element: .structure([.string, .string]), (0..<8).map { .structure([.string("a\($0)"), .string("A")]) })]),
        ("user-info", [.dictionary(key: .string, value: .string, [.init(key: .string("k"), value: .string("v"))])]),
        ("expire", [.uint32(1), .int32(86_400)]),
        ("persistent", [.boolean(false)]),
        ("snooze", [.uint32(1), .int64(604_800)]),
        ("grace", [.uint32(0), .uint64(31_622_400)]),
        ("time-zone", [.string("UTC"), .string("Pacific/Kiritimati"), .string("America/St_Johns")]),
        ("repeats", [.boolean(true)]),
        ("ring", [.uint32(0), .int64(3600)]),
        ("wake", [.boolean(true), .boolean(false)]),
        ("dnd", [.string("break-through"), .string("defer"), .string("silent")]),
    ]
}
