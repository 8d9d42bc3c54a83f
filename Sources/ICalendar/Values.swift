// The values calendar alarms are made of: durations (§3.3.6) and the zones TZIDs name.
import Timekeeping

public enum Values {
    /// `-PT15M`, `P1D`, `P1W`, `PT1H30M`, `P1DT12H` as seconds (negative: before); nil when it is not one.
    public static func duration(_ text: String) -> Int64? {
        // RFC 5545's grammar: ["+" / "-"] "P" (weeks "W" / days "D" [time] / time), time being "T"
        // then hours "H", minutes "M", seconds "S", each at most once and in that order. Each number
        // has at most 9 digits, so the sum cannot overflow; it is then held to `durationLimit`.
        var bytes = Substring(text).utf8[...]
        var sign: Int64 = 1
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            if first == UInt8(ascii: "-") { sign = -1 }
            bytes = bytes.dropFirst()
        }
        guard let p = bytes.first, p | 0x20 == UInt8(ascii: "p") else { return nil }
        bytes = bytes.dropFirst()
        // The units in the order they may come: W alone; D; then after T, H, M, S.
        let units: [(letter: UInt8, scale: Int64, inTime: Bool)] = [
            (UInt8(ascii: "W"), 604_800, false), (UInt8(ascii: "D"), 86_400, false),
            (UInt8(ascii: "H"), 3600, true), (UInt8(ascii: "M"), 60, true), (UInt8(ascii: "S"), 1, true),
        ]
        var total: Int64 = 0
        var next = 0  // the first unit that may still come
        var inTime = false
        var number: Int64 = 0
        var digits = 0
        var sawWeeks = false
        var sawTimePart = false
        for byte in bytes {
            let letter = byte & 0xDF  // upper case
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digits += 1
                guard digits <= 9 else { return nil }
                number = number * 10 + Int64(byte - UInt8(ascii: "0"))
            } else if letter == UInt8(ascii: "T") {
                guard !inTime, !sawWeeks, digits == 0 else { return nil }
                inTime = true
                next = max(next, 2)
            } else {
                guard digits > 0, let index = units.indices.first(where: { units[$0].letter == letter }),
                    index >= next, units[index].inTime == inTime, !sawWeeks
                else { return nil }
                if index == 0 {
                    guard total == 0 else { return nil }  // weeks stand alone
                    sawWeeks = true
                }
                if inTime { sawTimePart = true }
                total += number * units[index].scale
                next = index + 1
                number = 0
                digits = 0
            }
        }
        guard digits == 0, next > 0, !inTime || sawTimePart, total <= durationLimit else { return nil }
        return sign * total
    }

    /// The longest duration read (about 100 years): anything longer is no alarm's offset or an
    /// event's length, and refused like text that is not a duration.
    public static let durationLimit: Int64 = 100 * 366 * 86_400

    /// `P1D`, `-PT15M` for a number of seconds (what `duration` reads).
    public static func durationText(_ seconds: Int64) -> String {
        var rest = abs(seconds)
        var text = seconds < 0 ? "-P" : "P"
        if rest == 0 { return "PT0S" }
        if rest % 604_800 == 0 { return text + "\(rest / 604_800)W" }
        if rest >= 86_400 {
            text += "\(rest / 86_400)D"
            rest %= 86_400
        }
        if rest > 0 {
            text += "T"
            if rest >= 3600 { text += "\(rest / 3600)H"; rest %= 3600 }
            if rest >= 60 { text += "\(rest / 60)M"; rest %= 60 }
            if rest > 0 { text += "\(rest)S" }
        }
        return text
    }

    /// Windows' names for zones, as Outlook and Exchange write TZIDs: the tz database zone for each
    /// (the zone CLDR's windowsZones lists first for it), for the zones people most often have.
    static let windowsZones: [String: String] = [
        "W. Europe Standard Time": "Europe/Berlin", "Romance Standard Time": "Europe/Paris",
        "Central Europe Standard Time": "Europe/Budapest", "Central European Standard Time": "Europe/Warsaw",
        "GMT Standard Time": "Europe/London", "Greenwich Standard Time": "Atlantic/Reykjavik",
        "E. Europe Standard Time": "Europe/Chisinau", "FLE Standard Time": "Europe/Kiev", "GTB Standard Time": "Europe/Bucharest",
        "Russian Standard Time": "Europe/Moscow", "Eastern Standard Time": "America/New_York",
        "Central Standard Time": "America/Chicago", "Mountain Standard Time": "America/Denver",
        "US Mountain Standard Time": "America/Phoenix", "Pacific Standard Time": "America/Los_Angeles",
        "Alaskan Standard Time": "America/Anchorage", "Hawaiian Standard Time": "Pacific/Honolulu",
        "Atlantic Standard Time": "America/Halifax", "E. South America Standard Time": "America/Sao_Paulo",
        "India Standard Time": "Asia/Kolkata", "China Standard Time": "Asia/Shanghai", "Tokyo Standard Time": "Asia/Tokyo",
        "Korea Standard Time": "Asia/Seoul", "Singapore Standard Time": "Asia/Singapore",
        "AUS Eastern Standard Time": "Australia/Sydney", "New Zealand Standard Time": "Pacific/Auckland",
        "UTC": "UTC", "Coordinated Universal Time": "UTC",
    ]

    /// The tz database name a TZID stands for: itself, its VTIMEZONE's `X-LIC-LOCATION` (what
    /// Thunderbird and Evolution write), the zone at the end of a path-like TZID
    /// (`/freeassociation.sourceforge.net/Europe/Berlin`), a Windows name, or a VTIMEZONE with one
    /// fixed whole-hour offset (`Etc/GMT-3`); nil when none of these says.
    public static func zoneName(_ tzid: String, timeZones: [Component]) -> String? {
        func known(_ name: String) -> Bool { (try? Zone.named(name)) != nil }
        let trimmed = tzid.trimmingCharacters(" \"")
        if known(trimmed) { return trimmed }
        let definition = timeZones.first { $0.first("TZID")?.value.trimmingCharacters(" \"") == trimmed }
        if let location = definition?.first("X-LIC-LOCATION")?.value, known(location) { return location }
        let parts = trimmed.split(separator: "/").map(String.init)
        for count in [3, 2] where parts.count > count {
            let tail = parts.suffix(count).joined(separator: "/")
            if known(tail) { return tail }
        }
        if let windows = windowsZones[trimmed] { return windows }
        if let definition, definition.children("DAYLIGHT").isEmpty, let standard = definition.children("STANDARD").first,
            let offset = standard.first("TZOFFSETTO")?.value, let seconds = offsetSeconds(offset), seconds % 3600 == 0
        {
            let hours = seconds / 3600
            return hours == 0 ? "UTC" : "Etc/GMT\(hours > 0 ? "-" : "+")\(abs(hours))"
        }
        return nil
    }

    /// `+0100`, `-0530`, `+013000` as seconds east of UTC.
    static func offsetSeconds(_ text: String) -> Int? {
        let digits = text.dropFirst()
        guard let sign = text.first, sign == "+" || sign == "-", digits.count == 4 || digits.count == 6,
            digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let values = Array(digits).map { Int(String($0))! }
        let seconds = (values[0] * 10 + values[1]) * 3600 + (values[2] * 10 + values[3]) * 60 + (digits.count == 6 ? values[4] * 10 + values[5] : 0)
        return sign == "-" ? -seconds : seconds
    }
}

extension String {
    /// Without the characters of `set` at either end (no Foundation here).
    public func trimmingCharacters(_ set: String) -> String {
        // Only the ends are looked at: a calendar's long description is not walked, or copied
        // when there is nothing to trim.
        var start = startIndex
        var end = endIndex
        while start < end, set.contains(self[start]) { start = index(after: start) }
        while end > start {
            let before = index(before: end)
            guard set.contains(self[before]) else { break }
            end = before
        }
        return start == startIndex && end == endIndex ? self : String(self[start..<end])
    }
}
