import Notifications
import Timekeeping

/// A request as JSON, written by hand: the bytes `JSONEncoder` with `.sortedKeys` writes for it
/// (keys in UTF-8 order, `/` escaped as `\/`, control characters as `\b \f \n \r \t` or `\u00xx`),
/// at a fraction of the cost. The daemon stores requests this way and compares an alarm file's
/// definitions by these bytes, so they must never differ from what an older chime stored:
/// `RequestJSONTests` holds it to `JSONEncoder` over thousands of generated requests.
///
/// `JSONEncoder` builds a tree of boxed values for each document and sorts every object's keys;
/// a followed calendar of 100,000 events spent more than half its reading there.
public enum RequestJSON {
    /// `request` as `JSONEncoder` (`.sortedKeys`) encodes it.
    public static func encode(_ request: NotificationRequest) -> String {
        var writer = Writer()
        writer.bytes.reserveCapacity(512 + request.content.body.utf8.count)
        writer.request(request)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Writes an object's members in the order given (the caller lists its keys sorted).
    struct Writer {
        var bytes: [UInt8] = []
        private var first = true

        mutating func request(_ r: NotificationRequest) {
            object {
                $0.member("content") { $0.content(r.content) }
                $0.member("identifier") { $0.string(r.identifier) }
                $0.member("trigger") { $0.trigger(r.trigger) }
            }
        }

        mutating func content(_ c: NotificationContent) {
            object {
                $0.member("actions") { w in
                    w.array(c.actions) { w, action in
                        w.object {
                            $0.member("identifier") { $0.string(action.identifier) }
                            $0.member("title") { $0.string(action.title) }
                        }
                    }
                }
                if c.autoSnooze { $0.member("autoSnooze") { $0.bool(true) } }
                $0.member("body") { $0.string(c.body) }
                if let command = c.bodyCommand {
                    $0.member("bodyCommand") { w in
                        w.object {
                            $0.member("arguments") { w in w.array(command.arguments) { $0.string($1) } }
                            $0.member("outputLimit") { $0.integer(Int64(command.outputLimit)) }
                            $0.member("timeLimit") { $0.integer(command.timeLimit.seconds) }
                        }
                    }
                }
                $0.member("bodyIsMarkup") { $0.bool(c.bodyIsMarkup) }
                $0.member("category") { $0.string(c.category) }
                if let policy = c.doNotDisturb { $0.member("doNotDisturb") { $0.string(policy.rawValue) } }
                $0.member("expiry") { w in
                    w.object {
                        switch c.expiry {
                        case .never: $0.member("never") { $0.object { _ in } }
                        case .after(let span): $0.member("seconds") { w in w.object { $0.member("_0") { $0.integer(span.seconds) } } }
                        case .serverDefault: $0.member("serverDefault") { $0.object { _ in } }
                        }
                    }
                }
                if let fade = c.fade { $0.member("fade") { $0.integer(fade.seconds) } }
                if let fadeFrom = c.fadeFrom { $0.member("fadeFrom") { $0.integer(Int64(fadeFrom)) } }
                if let grace = c.grace { $0.member("grace") { $0.integer(grace.seconds) } }
                $0.member("icon") { $0.string(c.icon) }
                if c.insist { $0.member("insist") { $0.bool(true) } }
                $0.member("label") { $0.string(c.label) }
                if let ring = c.ring { $0.member("ring") { $0.integer(ring.seconds) } }
                if let snooze = c.snooze { $0.member("snooze") { $0.integer(snooze.seconds) } }
                if let sound = c.sound {
                    $0.member("sound") { w in
                        w.object {
                            switch sound {
                            case .default: $0.member("kind") { $0.string("default") }
                            case .named(let name):
                                $0.member("kind") { $0.string("named") }
                                $0.member("value") { $0.string(name) }
                            case .file(let path):
                                $0.member("kind") { $0.string("file") }
                                $0.member("value") { $0.string(path) }
                            }
                        }
                    }
                }
                $0.member("subtitle") { $0.string(c.subtitle) }
                $0.member("title") { $0.string(c.title) }
                $0.member("urgency") { $0.string(c.urgency.name) }
                $0.member("userInfo") { w in
                    w.object {
                        for key in c.userInfo.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                            $0.member(key) { $0.string(c.userInfo[key]!) }
                        }
                    }
                }
                if let volume = c.volume { $0.member("volume") { $0.integer(Int64(volume)) } }
                if c.wake { $0.member("wake") { $0.bool(true) } } else if c.stayAsleep { $0.member("wake") { $0.bool(false) } }
            }
        }

        mutating func trigger(_ t: Trigger) {
            object {
                $0.member("anchor") { $0.integer(t.anchor.seconds) }
                if case .instant(let at) = t.rule {
                    $0.member("at") { $0.integer(at.seconds) }
                    if at.nanosecond != 0 { $0.member("atNanosecond") { $0.integer(at.nanosecond) } }
                }
                if let count = t.count { $0.member("count") { $0.integer(Int64(count)) } }
                if let end = t.countEnd { $0.member("countEnd") { $0.integer(end.nanosecondsSinceEpoch) } }
                if !t.exceptions.isEmpty { $0.member("exceptions") { w in w.array(t.exceptions) { $0.string($1.description) } } }
                $0.member("kind") {
                    switch t.rule {
                    case .interval: $0.string("interval")
                    case .instant: $0.string("instant")
                    case .calendar: $0.string("calendar")
                    case .recurrence: $0.string("recurrence")
                    }
                }
                if t.anchor.nanosecond != 0 { $0.member("nanosecond") { $0.integer(t.anchor.nanosecond) } }
                if let notice = t.notice { $0.member("notice") { $0.integer(notice.seconds) } }
                if !t.offsets.isEmpty { $0.member("offsets") { w in w.array(t.offsets) { $0.integer($1.seconds) } } }
                if let policy = t.onHoliday, policy != .ring { $0.member("onHoliday") { $0.string(policy.rawValue) } }
                if !t.reminders.isEmpty { $0.member("reminders") { w in w.array(t.reminders) { $0.integer($1.seconds) } } }
                $0.member("repeats") { $0.bool(t.repeats) }
                switch t.rule {
                case .calendar(let expression): $0.member("rule") { $0.string(expression.description) }
                case .recurrence(let recurrence): $0.member("rule") { $0.string(recurrence.text) }
                case .interval, .instant: break
                }
                if let said = t.said { $0.member("said") { $0.string(said) } }
                if case .interval(let span, _) = t.rule { $0.member("seconds") { $0.integer(span.seconds) } }
                if !t.skipped.isEmpty { $0.member("skipped") { w in w.array(t.skipped) { $0.integer($1.nanosecondsSinceEpoch) } } }
                if let zone = t.timeZone { $0.member("timeZone") { $0.string(zone) } }
                if let until = t.until { $0.member("until") { $0.integer(until.nanosecondsSinceEpoch) } }
            }
        }

        // MARK: JSON

        mutating func object(_ members: (inout Writer) -> Void) {
            bytes.append(UInt8(ascii: "{"))
            let outer = first
            first = true
            members(&self)
            first = outer
            bytes.append(UInt8(ascii: "}"))
        }

        mutating func member(_ key: String, _ value: (inout Writer) -> Void) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            string(key)
            bytes.append(UInt8(ascii: ":"))
            value(&self)
        }

        mutating func array<C: Collection>(_ elements: C, _ element: (inout Writer, C.Element) -> Void) {
            bytes.append(UInt8(ascii: "["))
            var index = 0
            for each in elements {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element(&self, each)
                index += 1
            }
            bytes.append(UInt8(ascii: "]"))
        }

        mutating func bool(_ value: Bool) {
            bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        }

        mutating func integer(_ value: Int64) {
            bytes.append(contentsOf: String(value).utf8)
        }

        mutating func string(_ value: String) {
            bytes.append(UInt8(ascii: "\""))
            var text = value
            text.withUTF8 { utf8 in
                var mark = 0
                for index in utf8.indices {
                    let byte = utf8[index]
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") else { continue }
                    if index > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index])) }
                    mark = index + 1
                    bytes.append(UInt8(ascii: "\\"))
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
                    case 0x08: bytes.append(UInt8(ascii: "b"))
                    case 0x0C: bytes.append(UInt8(ascii: "f"))
                    case 0x0A: bytes.append(UInt8(ascii: "n"))
                    case 0x0D: bytes.append(UInt8(ascii: "r"))
                    case 0x09: bytes.append(UInt8(ascii: "t"))
                    default:
                        let hex = Array("0123456789abcdef".utf8)
                        bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                    }
                }
                if utf8.count > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...])) }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
