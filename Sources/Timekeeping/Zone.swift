// Time zones read from the system's tz database (TZif files), without Foundation.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Zones already read, with the identity of the file each came from. Rules are
/// evaluated again and again (every reschedule, every listed alarm), so the file
/// is read once and only read again when it changed (a tzdata upgrade, a new
/// /etc/localtime): one `stat` instead of an open, read and parse.
private let zoneCache = Mutex<[String: (stamp: FileStamp, zone: Zone)]>([:])

/// Zones of the tz database by name, each with when its file was last checked (the monotonic
/// clock's coarse reading, in nanoseconds). A rule names its zone at every read, and 100,000 rules
/// are read after a resume: a zone checked within the last second is taken as it is, without a
/// `stat`. A tzdata upgrade is seen within a second; a change of the system's zone is a change
/// of name (`Zone.system()` reads `/etc/localtime`'s link every time), seen at once.
private let namedZones = Mutex<[String: (zone: Zone, checked: Int64)]>([:])

/// How long a zone checked against its file is taken without checking again.
let zoneRecheckNanoseconds: Int64 = 1_000_000_000

func coarseMonotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// What identifies a version of a file: device, inode, size and modification time.
struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}

/// The zone in the TZif file at `path`, from the cache while the file is unchanged.
func cachedZone(path: String, identifier: String) throws(ZoneError) -> Zone {
    guard let stamp = FileStamp(path: path) else {
        throw ZoneError("unknown time zone \"\(identifier)\" (no such zone in \(Zone.databasePath))")
    }
    var key = identifier
    key.reserveCapacity(identifier.utf8.count + 1 + path.utf8.count)
    key += "\u{0}"
    key += path
    if let hit = zoneCache.withLock({ $0[key] }), hit.stamp == stamp { return hit.zone }
    let zone = try parseTZif(try readWholeFile(path), identifier: identifier)
    zoneCache.withLock { $0[key] = (stamp, zone) }
    return zone
}

/// Why a time zone could not be loaded.
public struct ZoneError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// What a wall-clock time is in a zone: one instant, two (a fall-back
/// overlap), or none (a spring-forward gap, with the instant the gap ends).
public enum Resolution: Hashable, Sendable {
    case unique(UnixTime)
    case ambiguous(earlier: UnixTime, later: UnixTime)
    case gap(endsAt: UnixTime)
}

/// A time zone of the tz database: its recorded transitions and the POSIX
/// rule (the TZif footer) that continues them into the future.
public struct Zone: Hashable, Sendable, CustomStringConvertible {
    /// What a zone is, kept once: a zone is copied with every rule that names it (100,000 rules
    /// read after a resume), and a copy is then one reference, not six.
    private final class Storage: Hashable, Sendable {
        let identifier: String
        let transitions: [UnixTime]
        let transitionTypes: [Int]
        let types: [LocalType]
        let rule: PosixRule?

        init(identifier: String, transitions: [UnixTime], transitionTypes: [Int], types: [LocalType], rule: PosixRule?) {
            self.identifier = identifier
            self.transitions = transitions
            self.transitionTypes = transitionTypes
            self.types = types
            self.rule = rule
        }

        static func == (a: Storage, b: Storage) -> Bool {
            a === b || (a.identifier == b.identifier && a.transitions == b.transitions && a.transitionTypes == b.transitionTypes
                && a.types == b.types && a.rule == b.rule)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(identifier)
            hasher.combine(transitions)
            hasher.combine(transitionTypes)
            hasher.combine(types)
            hasher.combine(rule)
        }
    }

    private let storage: Storage
    /// The tz name, such as `Europe/Berlin`, or `UTC`.
    public var identifier: String { storage.identifier }
    var transitions: [UnixTime] { storage.transitions }
    var transitionTypes: [Int] { storage.transitionTypes }
    var types: [LocalType] { storage.types }
    var rule: PosixRule? { storage.rule }

    struct LocalType: Hashable, Sendable {
        var offset: Int
        var isDST: Bool
        var abbreviation: String
    }

    public var description: String { identifier }

    /// Coordinated Universal Time.
    public static let utc = Zone(
        identifier: "UTC", transitions: [], transitionTypes: [], types: [LocalType(offset: 0, isDST: false, abbreviation: "UTC")],
        rule: nil)

    init(identifier: String, transitions: [UnixTime], transitionTypes: [Int], types: [LocalType], rule: PosixRule?) {
        storage = Storage(identifier: identifier, transitions: transitions, transitionTypes: transitionTypes, types: types, rule: rule)
    }

    /// The directory of the tz database.
    public static let databasePath = "/usr/share/zoneinfo"

    /// Loads a zone by its tz name (`America/New_York`, `UTC`, `Etc/GMT+5`).
    public static func named(_ identifier: String) throws(ZoneError) -> Zone {
        if identifier == "UTC" || identifier == "Etc/UTC" || identifier == "Z" { return .utc }
        let now = coarseMonotonicNanoseconds()
        if let known = namedZones.withLock({ $0[identifier] }), now - known.checked < zoneRecheckNanoseconds { return known.zone }
        // Bytes, not Characters: a rule's zone is looked up at every read of the rule.
        var valid = !identifier.isEmpty
        var previous: UInt8 = 0x2F  // a leading "/" is refused as "//" would be
        for byte in identifier.utf8 {
            if byte <= 0x20 || byte >= 0x7F || (byte == 0x2F && previous == 0x2F) || (byte == 0x2E && previous == 0x2E) {
                valid = false
                break
            }
            previous = byte
        }
        guard valid, identifier.utf8.first != 0x2F else { throw ZoneError("\"\(identifier)\" is not a time zone name") }
        var path = databasePath
        path.reserveCapacity(path.utf8.count + 1 + identifier.utf8.count)
        path += "/"
        path += identifier
        let zone = try cachedZone(path: path, identifier: identifier)
        namedZones.withLock { $0[identifier] = (zone, now) }
        return zone
    }

    /// The file that names the system's zone (a test build of the daemon points it elsewhere: a test
    /// must not change the machine's zone).
    nonisolated(unsafe) public static var localtimePath = "/etc/localtime"

    /// A zone from a POSIX TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`); nil when it is not one.
    public static func posix(_ text: String) -> Zone? {
        guard let rule = PosixRule(text) else { return nil }
        return Zone(identifier: text, transitions: [], transitionTypes: [],
                    types: [LocalType(offset: rule.standardOffset, isDST: false, abbreviation: rule.standardName)], rule: rule)
    }

    /// A zone from the bytes of a TZif file (RFC 8536), as the tz database keeps them.
    public static func reading(tzif bytes: [UInt8], identifier: String) throws(ZoneError) -> Zone {
        try parseTZif(bytes, identifier: identifier)
    }

    /// The system's zone: `$TZ` when set to a zone name, else the zone `/etc/localtime` names, else UTC.
    public static func system() -> Zone {
        if let tz = getenv("TZ").map({ String(cString: $0) }), !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = try? named(name) { return zone }
            if let zone = posix(name) { return zone }
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink(localtimePath, &buffer, buffer.count - 1)
        if length > 0 {
            let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let marker = Array("zoneinfo/".utf8)
            let bytes = Array(target.utf8)
            if bytes.count > marker.count,
                let start = (0...(bytes.count - marker.count)).first(where: { Array(bytes[$0..<($0 + marker.count)]) == marker })
            {
                let name = String(decoding: bytes[(start + marker.count)...], as: UTF8.self)
                if let zone = try? named(name) { return zone }
            }
        }
        if let zone = try? cachedZone(path: localtimePath, identifier: "localtime") { return zone }
        return .utc
    }

    // MARK: - Offsets

    /// The local type in effect at `time`.
    func localType(at time: UnixTime) -> LocalType {
        if let last = transitions.last, time >= last, let rule {
            return rule.localType(at: time)
        }
        guard let first = transitions.first, time >= first else {
            return types.first ?? Zone.utc.types[0]
        }
        // The last transition at or before `time`.
        var low = 0
        var high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid] <= time { low = mid } else { high = mid - 1 }
        }
        return types[transitionTypes[low]]
    }

    /// The offset from UTC, in seconds, at `time`.
    public func offset(at time: UnixTime) -> Int { localType(at: time).offset }

    /// The offset in force at every instant that could show the wall-clock time `local`, or nil
    /// when a transition lies within two days of it (or its year is left to the zone's rule, which
    /// changes): then `resolve` is needed. A cheap answer for the usual case, which is most times.
    func steadyOffset(near local: Int64) -> Int? {
        let low = local - 50 * 3600
        let high = local + 50 * 3600
        guard let last = transitions.last, high >= transitions[0] else {
            // Before any transition (or none at all): the first type, unless a rule takes over.
            if transitions.isEmpty, let rule { return rule.hasDST ? nil : rule.standardOffset }
            return types.first?.offset ?? 0
        }
        if high >= last {
            // After the table the rule decides (a steady one only without DST); without a rule the
            // last type stays.
            guard low > last else { return nil }
            guard let rule else { return types[transitionTypes[transitionTypes.count - 1]].offset }
            return rule.hasDST ? nil : rule.standardOffset
        }
        // The first transition after `low`: none may come before `high`.
        var lower = 0
        var upper = transitions.count
        while lower < upper {
            let mid = (lower + upper) / 2
            if transitions[mid] <= low { lower = mid + 1 } else { upper = mid }
        }
        guard lower == transitions.count || transitions[lower] > high else { return nil }
        return lower == 0 ? types.first?.offset ?? 0 : types[transitionTypes[lower - 1]].offset
    }

    /// Whether daylight saving time is in effect at `time`.
    public func isDaylightSavingTime(at time: UnixTime) -> Bool { localType(at: time).isDST }

    /// The abbreviation in use at `time` (`CEST`, `EST`, `+0545`).
    public func abbreviation(at time: UnixTime) -> String { localType(at: time).abbreviation }

    /// The wall-clock time at `time`.
    public func civil(at time: UnixTime) -> CivilTime {
        CivilTime(localSeconds: time + Int64(offset(at: time)))
    }

    /// The transitions (instants where the offset changes) in `range`, in order.
    func transitions(in range: ClosedRange<UnixTime>) -> [UnixTime] {
        var result: [UnixTime] = []
        var previousOffset = offset(at: range.lowerBound - 1)
        // The first recorded transition at or after the range's start (binary search).
        var low = 0
        var high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] < range.lowerBound { low = mid + 1 } else { high = mid }
        }
        var index = low
        while index < transitions.count, transitions[index] <= range.upperBound {
            let offset = types[transitionTypes[index]].offset
            if offset != previousOffset { result.append(transitions[index]) }
            previousOffset = offset
            index += 1
        }
        if let rule, rule.hasDST {
            let last = transitions.last ?? Int64.min
            let firstYear = CivilTime(localSeconds: range.lowerBound).year - 1
            let lastYear = CivilTime(localSeconds: range.upperBound).year + 1
            for year in firstYear...lastYear {
                for t in rule.transitions(inYear: year) where t > last && range.contains(t) { result.append(t) }
            }
            result.sort()
        }
        return result
    }

    /// The instants that show `civil` on the wall clock.
    public func resolve(_ civil: CivilTime) -> Resolution {
        let local = civil.localSeconds
        // Every instant with this wall-clock time lies within 26 hours of `local`.
        let window = (local - 26 * 3600)...(local + 26 * 3600)
        var offsets = [offset(at: window.lowerBound)]
        for t in transitions(in: window) {
            let o = offset(at: t)
            if !offsets.contains(o) { offsets.append(o) }
        }
        var instants: [UnixTime] = []
        for o in offsets {
            let candidate = local - Int64(o)
            if offset(at: candidate) == o, !instants.contains(candidate) { instants.append(candidate) }
        }
        instants.sort()
        switch instants.count {
        case 1: return .unique(instants[0])
        case 0:
            // A gap: the clock jumped over `civil`; the gap ends at the transition
            // whose wall clock went from before `civil` to after it.
            for t in transitions(in: window) {
                let before = t - 1 + Int64(offset(at: t - 1))
                let after = t + Int64(offset(at: t))
                if before < local && local < after { return .gap(endsAt: t) }
            }
            return .gap(endsAt: local - Int64(offset(at: local)))
        default: return .ambiguous(earlier: instants[0], later: instants[instants.count - 1])
        }
    }
}

// MARK: - TZif

func readWholeFile(_ path: String, limit: Int = 1 << 20) throws(ZoneError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ZoneError("cannot open \(path)") }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw ZoneError("cannot read \(path)")
        }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
        if out.count > limit { throw ZoneError("\(path) is too large to be a time zone") }
    }
    return out
}

/// Reads a TZif file (RFC 8536), using the 64-bit data of version 2 and later.
func parseTZif(_ bytes: [UInt8], identifier: String) throws(ZoneError) -> Zone {
    func fail() -> ZoneError { ZoneError("\(identifier) is not a valid TZif file") }
    var at = 0
    func u32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
    func i32(_ i: Int) -> Int64 { Int64(Int32(bitPattern: UInt32(u32(i)))) }
    func i64(_ i: Int) -> Int64 {
        var v: UInt64 = 0
        for k in 0..<8 { v = v << 8 | UInt64(bytes[i + k]) }
        return Int64(bitPattern: v)
    }
    struct Header { var isut, isstd, leap, time, type, char: Int }
    func header(_ i: Int) throws(ZoneError) -> Header {
        guard bytes.count >= i + 44, bytes[i] == 0x54, bytes[i + 1] == 0x5A, bytes[i + 2] == 0x69, bytes[i + 3] == 0x66 else {
            throw fail()
        }
        return Header(isut: u32(i + 20), isstd: u32(i + 24), leap: u32(i + 28), time: u32(i + 32), type: u32(i + 36), char: u32(i + 40))
    }
    let first = try header(0)
    let version = bytes[4]
    var timeSize = 4
    var h = first
    at = 44
    if version >= 0x32 {  // '2' or later: skip the v1 block
        at += first.time * 5 + first.type * 6 + first.char + first.leap * 8 + first.isstd + first.isut
        h = try header(at)
        at += 44
        timeSize = 8
    }
    let needed = h.time * (timeSize + 1) + h.type * 6 + h.char + h.leap * (timeSize + 4) + h.isstd + h.isut
    guard h.type > 0, bytes.count >= at + needed else { throw fail() }
    var transitions: [UnixTime] = []
    for k in 0..<h.time { transitions.append(timeSize == 8 ? i64(at + k * 8) : i32(at + k * 4)) }
    at += h.time * timeSize
    var indices: [Int] = []
    for k in 0..<h.time {
        let index = Int(bytes[at + k])
        guard index < h.type else { throw fail() }
        indices.append(index)
    }
    at += h.time
    let typeStart = at
    let charStart = typeStart + h.type * 6
    var types: [Zone.LocalType] = []
    for k in 0..<h.type {
        let base = typeStart + k * 6
        let offset = Int(i32(base))
        // RFC 8536 §3.2: a UT offset lies in -89999...93599 (under a day either way); a file with
        // another (a fuzzer made -1,600,061,440 s) is no zone.
        guard (-89_999...93_599).contains(offset) else { throw ZoneError("a local time type is \(offset) s from UT") }
        let abbreviationIndex = Int(bytes[base + 5])
        var end = charStart + abbreviationIndex
        while end < charStart + h.char, bytes[end] != 0 { end += 1 }
        let abbreviation = abbreviationIndex < h.char ? String(decoding: bytes[(charStart + abbreviationIndex)..<end], as: UTF8.self) : ""
        types.append(Zone.LocalType(offset: offset, isDST: bytes[base + 4] != 0, abbreviation: abbreviation))
    }
    at = charStart + h.char + h.leap * (timeSize + 4) + h.isstd + h.isut
    var rule: PosixRule? = nil
    if timeSize == 8, at < bytes.count, bytes[at] == 0x0A {
        var end = at + 1
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        let text = String(decoding: bytes[(at + 1)..<end], as: UTF8.self)
        if !text.isEmpty { rule = PosixRule(text) }
    }
    return Zone(identifier: identifier, transitions: transitions, transitionTypes: indices, types: types, rule: rule)
}

// MARK: - POSIX TZ rules

/// A POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3`: how a zone keeps
/// changing after the last transition its file records.
struct PosixRule: Hashable, Sendable {
    var standardName: String
    var standardOffset: Int  // seconds east of UTC
    var dstName: String
    var dstOffset: Int
    var start: DateRule
    var startTime: Int  // seconds after local midnight (standard time)
    var end: DateRule
    var endTime: Int  // seconds after local midnight (daylight time)
    var hasDST: Bool

    enum DateRule: Hashable, Sendable {
        case julianNoLeap(Int)  // Jn, 1...365, February 29 never counted
        case zeroBased(Int)  // n, 0...365
        case monthWeekDay(month: Int, week: Int, weekday: Int)  // Mm.w.d, weekday 0 = Sunday

        func day(inYear year: Int) -> Int64 {
            switch self {
            case .julianNoLeap(let n):
                var day = daysFromCivil(year, 1, 1) + Int64(n - 1)
                if isLeapYear(year) && n >= 60 { day += 1 }
                return day
            case .zeroBased(let n):
                return daysFromCivil(year, 1, 1) + Int64(n)
            case .monthWeekDay(let month, let week, let weekday):
                let first = daysFromCivil(year, month, 1)
                let firstWeekday = isoWeekday(first) % 7  // 0 = Sunday
                var day = first + Int64((weekday - firstWeekday + 7) % 7) + Int64((week - 1) * 7)
                let last = first + Int64(daysInMonth(year, month) - 1)
                while day > last { day -= 7 }
                return day
            }
        }
    }

    init?(_ text: String) {
        var s = Substring(text)
        func name() -> String? {
            if s.first == "<" {
                guard let close = s.firstIndex(of: ">") else { return nil }
                let n = String(s[s.index(after: s.startIndex)..<close])
                s = s[s.index(after: close)...]
                return n
            }
            let n = s.prefix { $0.isLetter }
            guard n.count >= 3 else { return nil }
            s = s.dropFirst(n.count)
            return String(n)
        }
        // Every number is bounded as it is read (the TZ variable is anyone's text): an hour of at
        // most 167 (RFC 8536's extension of POSIX's 24), minutes and seconds below 60, and the
        // date rules' fields within their ranges; anything else is no rule.
        func number(_ allowed: ClosedRange<Int>) -> Int? {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3, let v = Int(digits), allowed.contains(v) else { return nil }
            s = s.dropFirst(digits.count)
            return v
        }
        func clock() -> Int? {  // [+-]hh[:mm[:ss]]
            var sign = 1
            if s.first == "+" { s = s.dropFirst() } else if s.first == "-" { sign = -1; s = s.dropFirst() }
            guard let h = number(0...167) else { return nil }
            var seconds = h * 3600
            for scale in [60, 1] {
                guard s.first == ":" else { break }
                s = s.dropFirst()
                guard let v = number(0...59) else { return nil }
                seconds += v * scale
            }
            return sign * seconds
        }
        /// `,date[/time]`: one change of the rule, at 02:00 unless a time is given.
        func change() -> (DateRule, Int)? {
            guard s.first == "," else { return nil }
            s = s.dropFirst()
            guard let rule = dateRule() else { return nil }
            guard s.first == "/" else { return (rule, 7200) }
            s = s.dropFirst()
            return clock().map { (rule, $0) }
        }
        func dateRule() -> DateRule? {
            if s.first == "J" {
                s = s.dropFirst()
                return number(1...365).map(DateRule.julianNoLeap)
            }
            if s.first == "M" {
                s = s.dropFirst()
                guard let month = number(1...12), s.first == "." else { return nil }
                s = s.dropFirst()
                guard let week = number(1...5), s.first == "." else { return nil }
                s = s.dropFirst()
                guard let weekday = number(0...6) else { return nil }
                return .monthWeekDay(month: month, week: week, weekday: weekday)
            }
            return number(0...365).map(DateRule.zeroBased)
        }
        guard let std = name(), let stdClock = clock() else { return nil }
        standardName = std
        standardOffset = -stdClock
        guard !s.isEmpty else {
            dstName = std
            dstOffset = standardOffset
            start = .zeroBased(0)
            end = .zeroBased(0)
            startTime = 0
            endTime = 0
            hasDST = false
            return
        }
        guard let dst = name() else { return nil }
        dstName = dst
        if s.first != "," && !s.isEmpty {
            guard let c = clock() else { return nil }
            dstOffset = -c
        } else {
            dstOffset = standardOffset + 3600
        }
        // The default rule of POSIX (US rules) when none is given.
        if s.isEmpty { s = ",M3.2.0,M11.1.0" }
        guard let (startRule, startAt) = change(), let (endRule, endAt) = change(), s.isEmpty else { return nil }
        (start, startTime, end, endTime) = (startRule, startAt, endRule, endAt)
        hasDST = true
    }

    /// The instants DST starts and ends in `year`.
    func transitions(inYear year: Int) -> [UnixTime] {
        guard hasDST else { return [] }
        let dstStart = start.day(inYear: year) * 86_400 + Int64(startTime) - Int64(standardOffset)
        let dstEnd = end.day(inYear: year) * 86_400 + Int64(endTime) - Int64(dstOffset)
        return [dstStart, dstEnd].sorted()
    }

    func localType(at time: UnixTime) -> Zone.LocalType {
        let standard = Zone.LocalType(offset: standardOffset, isDST: false, abbreviation: standardName)
        guard hasDST else { return standard }
        let daylight = Zone.LocalType(offset: dstOffset, isDST: true, abbreviation: dstName)
        let year = CivilTime(localSeconds: time + Int64(standardOffset)).year
        // Look at this year and its neighbours: a rule's instants can cross the new year.
        var state = false
        var latest = Int64.min
        for y in (year - 1)...(year + 1) {
            let dstStart = start.day(inYear: y) * 86_400 + Int64(startTime) - Int64(standardOffset)
            let dstEnd = end.day(inYear: y) * 86_400 + Int64(endTime) - Int64(dstOffset)
            for (t, isDST) in [(dstStart, true), (dstEnd, false)] where t <= time && t > latest {
                latest = t
                state = isDST
            }
        }
        return state ? daylight : standard
    }
}

extension Zone {
    /// `time` as ISO 8601 in this zone, to the second: `2026-11-01T01:30:00-04:00`.
    public func iso8601(_ time: UnixTime) -> String { iso8601(time, nanosecond: 0) }

    /// `time` and `nanosecond` as ISO 8601 in this zone: the seconds' fraction written only where
    /// there is one, without its trailing zeros (`16:35:00.25+01:00`).
    func iso8601(_ time: UnixTime, nanosecond: Int64) -> String {
        let civil = self.civil(at: time)
        let offset = self.offset(at: time)
        // Written straight into the string's storage (a listing writes 100,000 of these).
        return String(unsafeUninitializedCapacity: 40) { out in
            var at = 0
            func put(_ byte: UInt8) {
                out[at] = byte
                at += 1
            }
            func digits(_ value: Int, _ count: Int) {
                var value = abs(value)
                for i in stride(from: at + count - 1, through: at, by: -1) {
                    out[i] = 0x30 + UInt8(value % 10)
                    value /= 10
                }
                at += count
            }
            if civil.year < 0 { put(UInt8(ascii: "-")) }
            digits(civil.year, 4)
            put(UInt8(ascii: "-")); digits(civil.month, 2)
            put(UInt8(ascii: "-")); digits(civil.day, 2)
            put(UInt8(ascii: "T")); digits(civil.hour, 2)
            put(UInt8(ascii: ":")); digits(civil.minute, 2)
            put(UInt8(ascii: ":")); digits(civil.second, 2)
            if nanosecond > 0 {
                put(UInt8(ascii: "."))
                var fraction = Int(nanosecond % 1_000_000_000)
                var width = 9
                while fraction % 10 == 0 {
                    fraction /= 10
                    width -= 1
                }
                digits(fraction, width)
            }
            put(UInt8(ascii: offset < 0 ? "-" : "+"))
            digits(abs(offset) / 3600 % 100, 2)
            put(UInt8(ascii: ":")); digits(abs(offset) / 60 % 60, 2)
            return at
        }
    }

    /// `instant` as ISO 8601 in this zone, exactly: to the second, with the fraction it has.
    public func iso8601(_ instant: Instant) -> String { iso8601(instant.seconds, nanosecond: instant.nanosecond) }
}
