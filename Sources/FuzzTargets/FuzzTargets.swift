// The readers that take other people's input, each as a fuzz target: `make fuzz` runs them under
// libFuzzer with AddressSanitizer (Fuzz/, one binary, the target named by CHIME_FUZZ_TARGET), and
// the tests run every seed and every kept finding through the same functions (FuzzCorpusTests).
//
// Each target checks a property beyond "no crash": what a reader accepts behaves (rules move
// forward and print as text that reads back, a decoded request validates, an export reads back as
// the same alarms, a zone's offsets stay within a week). `check` says which property broke; the
// fuzzer stops on it and keeps the input, the tests record it.
import ChimeCalendars
import ChimeCenter
import ChimeConfig
import DBus
import ICalendar
import Notifications
import Posix
import Sound
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Rule text of every form (`chime next`, `Add`'s `rule`, the alarm file's `when`).
    case rule
    /// An .ics file, imported as the person's own, exported and imported again.
    case icalendar
    /// An alarm file (TOML).
    case alarmFile = "alarm-file"
    /// `Add`'s request, written as GVariant text (the fuzzer's way to build any a{sv}).
    case request
    /// notify-send's `--hint TYPE:NAME:VALUE`.
    case hint
    /// A PNG file as a notification's image.
    case png
    /// The TZ variable's POSIX rule.
    case tzString = "tz-string"
    /// A TZif file.
    case tzif
    /// A sound file, decoded as the daemon decodes one: by its decoder, in a process of its own.
    case sound
    /// A phrase in English, German, French or Spanish (`every other tuesday 09:00`, `morgen um 7 Uhr`).
    case phrase
    /// A holiday calendar (.ics), read as days off, and a weekday alarm planned with them.
    case holidays

    /// When every target counts from: 2026-11-26 00:00 UTC.
    static let now = Instant(seconds: 1_795_651_200)

    /// Runs one input through the target: nil, or the property it broke.
    public func check(_ bytes: [UInt8]) -> String? {
        switch self {
        case .rule: Self.rule(String(decoding: bytes, as: UTF8.self))
        case .icalendar: Self.icalendar(bytes)
        case .alarmFile: Self.alarmFile(bytes)
        case .request: Self.request(String(decoding: bytes, as: UTF8.self))
        case .hint: Self.hint(String(decoding: bytes, as: UTF8.self))
        case .png: Self.png(bytes)
        case .tzString: Self.tzString(String(decoding: bytes, as: UTF8.self))
        case .tzif: Self.tzif(bytes)
        case .sound: Self.sound(bytes)
        case .phrase: Self.phrase(String(decoding: bytes, as: UTF8.self))
        case .holidays: Self.holidays(bytes)
        }
    }

    static func rule(_ text: String) -> String? {
        guard let trigger = try? Trigger(parsing: text, anchor: now) else { return nil }
        var t = now
        for _ in 0..<5 {
            guard let next = trigger.nextFire(after: t) else { break }
            if next <= t || next > Instant.latest { return "\(text): next fire \(next) after \(t)" }
            t = next
        }
        if case .calendar(let expression) = trigger.rule, (try? CalendarExpression(parsing: expression.description)) != expression {
            return "\(text): prints as \(expression.description), which does not read back"
        }
        return nil
    }

    /// A phrase read (in Berlin, in every language) moves forward, and the words said back read
    /// again as the same rule.
    static func phrase(_ text: String) -> String? {
        guard let berlin = try? Zone.named("Europe/Berlin") else { return "no Europe/Berlin" }
        for language in PhraseLanguage.allCases {
            let context = PhraseContext(said: now, zone: berlin, language: language)
            guard let reading = try? Phrase.read(text, context) else { continue }
            var t = now
            for _ in 0..<3 {
                guard let next = reading.rule.nextFire(after: t, anchor: now, repeats: true, in: berlin) else { break }
                if next <= t { return "\(text): next fire \(next) after \(t)" }
                t = next
            }
            guard let again = try? Phrase.read(reading.words, context) else { return "\(text): said back as \(reading.words), which does not read" }
            if again.rule != reading.rule { return "\(text): said back as \(reading.words), which reads as another rule" }
        }
        return nil
    }

    static func icalendar(_ bytes: [UInt8]) -> String? {
        let read = CalendarImport(reading: bytes, anchor: now, trust: .ownFile)
        let requests = read.alarms.compactMap { try? $0.draft.build(now: nil) }
        guard !requests.isEmpty else { return nil }
        let again = CalendarImport(reading: CalendarExport.calendar(requests, now: now), anchor: now, trust: .ownFile)
        let back = again.alarms.compactMap { try? $0.draft.build(now: nil) }
        guard back.map(\.identifier) == requests.map(\.identifier) else {
            return "export then import: \(requests.map(\.identifier)) came back as \(back.map(\.identifier)); \(again.problems)"
        }
        for (original, returned) in zip(requests, back) {
            let (a, b) = (original.trigger.nextFire(after: now), returned.trigger.nextFire(after: now))
            if a != b { return "export then import: \(original.identifier) fires at \(String(describing: b)), not \(String(describing: a))" }
        }
        return nil
    }

    /// Days off stay in the window and within their bound, and a weekday alarm planned with them,
    /// each policy, fires after the time asked, in order, never on a day off it skips.
    static func holidays(_ bytes: [UInt8]) -> String? {
        let window = HolidayCalendar.window(around: now)
        let read = HolidayCalendar(reading: bytes, window: window)
        if let outside = read.days.keys.first(where: { !window.contains($0) }) { return "day \(outside) is outside the window \(window)" }
        if read.days.count > HolidayCalendar.maximumDays + HolidayCalendar.maximumLength { return "\(read.days.count) days off: past the bound" }
        let off = DaysOff(holidays: read.days)
        for policy in HolidayPolicy.allCases {
            var trigger = try! Trigger(parsing: "07:00 mon-fri", timeZone: "Europe/Berlin", anchor: now)
            trigger.onHoliday = policy
            var t = now
            for _ in 0..<20 {
                guard let next = trigger.nextFire(after: t, off: off) else { return "\(policy): no next occurrence after \(t)" }
                if next <= t { return "\(policy): \(next) is not after \(t)" }
                let day = trigger.wallClockZone.civil(at: next.seconds).dayNumber
                if policy != .ring, off.holiday(on: day) != nil { return "\(policy): rings on a day off (\(day))" }
                t = next
            }
        }
        return nil
    }

    static func alarmFile(_ bytes: [UInt8]) -> String? {
        let file = AlarmConfig.parse(bytes, path: "fuzz.toml", anchor: now)
        for alarm in file.alarms {
            do { try alarm.request.validate() } catch { return "the alarm file gave '\(alarm.id)', which does not validate: \(error)" }
        }
        return nil
    }

    static func request(_ text: String) -> String? {
        guard let value = try? GVariantText.parse(text), let entries = value.dictionaryEntries,
            let incoming = try? NotificationRequest.fromDBus(entries, now: now)
        else { return nil }
        // Without an identifier the daemon makes one.
        var request = incoming.request
        if !incoming.identifierGiven { request.identifier = "fuzz" }
        do { try request.validate() } catch { return "Add's decoder gave a request that does not validate: \(error)" }
        return nil
    }

    /// A hint is of the type its TYPE names (an empty name is allowed: notify-send sends one too);
    /// a `variant` hint's value is whatever its GVariant text says.
    static func hint(_ text: String) -> String? {
        guard let hint = try? NotifySendSyntax.hint(text) else { return nil }
        let type = text.prefix { $0 != ":" }.lowercased()
        if type == "variant" { return nil }
        let matches = switch hint.value {
        case .string: type == "string"
        case .int32: type == "int"
        case .double: type == "double"
        case .byte: type == "byte"
        case .boolean: type == "boolean"
        default: false
        }
        return matches ? nil : "\(text): a \(type) hint read as \(hint.value)"
    }

    /// The program that decodes sounds (`--decode-sound PATH` is added): chime-fuzz itself under
    /// libFuzzer, the built `chime daemon` in the tests.
    public static var soundDecoder: [String] {
        get { SoundServer.decoder }
        set { SoundServer.decoder = newValue }
    }

    /// The decoder's side, for a program that serves as its own decoder.
    public static func runSoundDecoder(path: String, looping: Bool) -> Int32 { SoundDecoder.run(path: path, looping: looping) }

    /// Whatever the bytes, the player's side ends: refused with a reason, or the sound to its end,
    /// or the decoder's failure said; never more sound than its header declared and a second, and
    /// never a wait past the stall bound (a decoder that crashes or hangs costs only its process).
    static func sound(_ bytes: [UInt8]) -> String? {
        let path = (Sys.environment("TMPDIR") ?? "/tmp") + "/chime-fuzz-sound-\(getpid())"
        let written = bytes.withUnsafeBytes { buffer -> Bool in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return write(fd, buffer.baseAddress, buffer.count) == buffer.count
        }
        defer { unlink(path) }
        guard written else { return nil }
        let outcome = SoundDecoding.decodeAll(path, frameLimit: 1 << 24)
        if outcome.refused != nil { return nil }
        if outcome.failure?.contains("sent nothing") == true { return "the decoder stalled: \(outcome.failure ?? "")" }
        if Int64(outcome.frames) > outcome.declared + Int64(outcome.rate) {
            return "\(outcome.frames) frames from a file that declared \(outcome.declared)"
        }
        return nil
    }

    static func png(_ bytes: [UInt8]) -> String? {
        guard let image = try? ImageData(png: bytes) else { return nil }
        return image.width <= 0 || image.height <= 0 ? "an image of \(image.width)×\(image.height)" : nil
    }

    /// Offsets within a week of UTC (RFC 8536's bound on the TZ string, 167 hours), and every
    /// civil time read back, from 1900 to 2200.
    static func zoneBehaves(_ zone: Zone, _ what: String) -> String? {
        var t: Int64 = -2_208_988_800
        while t < 7_258_118_400 {
            let offset = zone.offset(at: t)
            if abs(offset) > 168 * 3600 { return "\(what): offset \(offset) s at \(t)" }
            _ = zone.resolve(zone.civil(at: t))
            t += 86_400 * 97 + 3_607
        }
        return nil
    }

    static func tzString(_ text: String) -> String? {
        guard let zone = Zone.posix(text) else { return nil }
        return zoneBehaves(zone, "TZ=\(text)")
    }

    static func tzif(_ bytes: [UInt8]) -> String? {
        guard let zone = try? Zone.reading(tzif: bytes, identifier: "Fuzz/Zone") else { return nil }
        return zoneBehaves(zone, "a TZif file")
    }
}
