// The command-line syntax of notify-send (libnotify 0.8), so `chime notify`
// puts the same call on the wire for the same arguments.
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// A notify-send style argument that could not be used; `message` is the
/// one line to show.
public struct NotifySendSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    /// The text is not valid UTF-8 (bad input, not bad usage).
    public var isInvalidText = false
    /// What notify-send itself prints for the same mistake (chime's own words say more).
    public var notifySendMessage: String
    public var description: String { message }
    public init(_ message: String, notifySend: String? = nil) {
        self.message = message
        self.notifySendMessage = notifySend ?? message
    }
}

/// Parsers for notify-send's `-h TYPE:NAME:VALUE`, `-A [NAME=]TEXT` and body escapes.
public enum NotifySendSyntax {
    /// The hint types notify-send accepts.
    public static let hintTypes = ["boolean", "int", "double", "string", "byte", "variant"]

    /// Parses `TYPE:NAME:VALUE` as notify-send does: the type ignores case;
    /// `int` and `double` must start with a digit; `byte` must be 0-255 (`0x` hexadecimal);
    /// `boolean` is true for `true` or a non-zero number; `variant` is
    /// GVariant text (`"('a', <1>)"`, `@as []`, `uint32 7`).
    /// `string:NAME:` with nothing after the second colon: a hint notify-send does not send.
    public static func isEmptyStringHint(_ argument: String) -> Bool {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].lowercased() == "string" && parts[2].isEmpty
    }

    public static func hint(_ argument: String) throws(NotifySendSyntaxError) -> Hint {
        let parts = argument.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else {
            throw NotifySendSyntaxError("invalid hint \"\(argument)\": use TYPE:NAME:VALUE",
                                        notifySend: "Invalid hint syntax specified. Use TYPE:NAME:VALUE.")
        }
        let (type, name, text) = (parts[0].lowercased(), parts[1], parts[2])
        func unparsable() -> NotifySendSyntaxError {
            NotifySendSyntaxError("value \"\(text)\" of hint \"\(name)\" could not be parsed as type \"\(parts[0])\"",
                                  notifySend: "Value \"\(text)\" of hint \"\(name)\" could not be parsed as type \"\(parts[0])\".")
        }
        let startsWithDigit = text.utf8.first.map { (0x30...0x39).contains($0) } ?? false
        switch type {
        case "string":
            return .init(name: name, value: .string(text))
        case "int":
            guard startsWithDigit else { throw unparsable() }
            return .init(name: name, value: .int32(Int32(truncatingIfNeeded: asciiStrtoull(text))))
        case "double":
            guard startsWithDigit else { throw unparsable() }
            return .init(name: name, value: .double(strtod(text, nil)))
        case "byte":
            // libnotify 0.8.7 reads "0x11" as hexadecimal (only a lower-case "0x" prefix).
            let number = Int32(truncatingIfNeeded: asciiStrtoull(text, base: text.hasPrefix("0x") ? 16 : 10))
            guard (0...255).contains(number) else { throw unparsable() }
            return .init(name: name, value: .byte(UInt8(number)))
        case "boolean":
            let flag = text.lowercased() == "true" || (startsWithDigit && asciiStrtoull(text) != 0)
            return .init(name: name, value: .boolean(flag))
        case "variant":
            do {
                // The text is the hint's value itself: `<int32 5>` is a variant in the entry's variant.
                return .init(name: name, value: .variant(try GVariantText.parse(text)))
            } catch {
                throw NotifySendSyntaxError("value \"\(text)\" of hint \"\(name)\" is not GVariant text: \(error.message)",
                                            notifySend: "Value \"\(text)\" of hint \"\(name)\" could not be parsed as type \"\(parts[0])\".")
            }
        default:
            throw NotifySendSyntaxError(
                "invalid hint type \"\(parts[0])\": use one of \(hintTypes.joined(separator: ", "))",
                notifySend: "Invalid hint type \"\(parts[0])\". Valid types are int, double, string and byte.")
        }
    }

    /// Parses the `-A` arguments: `NAME=TEXT`, or `TEXT` named by its index
    /// among all `-A` arguments (from 0). Both sides are trimmed; an entry with
    /// an empty name or text is skipped, as notify-send does. A name given again
    /// keeps its place and takes the later text (libnotify keeps actions by name).
    public static func actions(_ arguments: [String]) -> [Action] {
        var result: [Action] = []
        for (index, argument) in arguments.enumerated() {
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key: String
            let label: String
            if parts.count == 1 {
                key = String(index)
                label = strip(String(parts[0]))
            } else {
                key = strip(String(parts[0]))
                label = strip(String(parts[1]))
            }
            guard !key.isEmpty, !label.isEmpty else { continue }
            if let earlier = result.firstIndex(where: { $0.key == key }) {
                result[earlier].label = label
            } else {
                result.append(Action(key: key, label: label))
            }
        }
        return result
    }

    /// Expands C escapes in a body as `g_strcompress` does: `\n`, `\t`, `\b`,
    /// `\f`, `\r`, `\v`, octal `\NNN`, and `\X` for any other X. The result
    /// ends at a NUL, as a C string does, and must be valid UTF-8.
    public static func compressBody(_ text: String) throws(NotifySendSyntaxError) -> String {
        let input = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        var i = 0
        loop: while i < input.count {
            let byte = input[i]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            i += 1
            guard i < input.count else { break }  // a trailing backslash is dropped
            let next = input[i]
            switch next {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = 0
                var digits = 0
                while digits < 3, i < input.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(input[i]) {
                    value = value * 8 + Int(input[i] - UInt8(ascii: "0"))
                    i += 1
                    digits += 1
                }
                out.append(UInt8(truncatingIfNeeded: value))
                continue loop
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "v"): out.append(0x0B)
            default: out.append(next)
            }
            i += 1
        }
        if let nul = out.firstIndex(of: 0) { out.removeSubrange(nul...) }
        guard let body = String(validating: out, as: UTF8.self) else {
            var error = NotifySendSyntaxError("invalid UTF-8 in the body after expanding its escapes",
                                              notifySend: "Invalid UTF-8 provided for parameter: Body")
            error.isInvalidText = true
            throw error
        }
        return body
    }

    /// `g_strstrip`: trims ASCII white space at both ends.
    static func strip(_ text: String) -> String {
        let bytes = Array(text.utf8)
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// `g_ascii_strtoull(text, NULL, 10)`: leading space, an optional sign
    /// (a minus negates modulo 2^64), decimal digits; saturates on overflow;
    /// 0 when there are no digits.
    static func asciiStrtoull(_ text: String, base: UInt64 = 10) -> UInt64 {
        var bytes = text.utf8[...]
        while let b = bytes.first, b == 0x20 || (0x09...0x0D).contains(b) { bytes = bytes.dropFirst() }
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        func digitValue(_ b: UInt8) -> UInt64 {
            switch b {
            case 0x30...0x39: UInt64(b - 0x30)
            case 0x61...0x66: UInt64(b - 0x61 + 10)
            case 0x41...0x46: UInt64(b - 0x41 + 10)
            default: 99
            }
        }
        // Base 16 skips a "0x" or "0X" (as g_ascii_strtoull does) when a digit follows it.
        if base == 16, bytes.count > 2, bytes.first == UInt8(ascii: "0"),
            bytes.dropFirst().first.map({ $0 | 0x20 == UInt8(ascii: "x") }) == true,
            bytes.dropFirst(2).first.map({ digitValue($0) < 16 }) == true
        {
            bytes = bytes.dropFirst(2)
        }
        var value: UInt64 = 0
        var overflow = false
        var sawDigit = false
        for b in bytes {
            let digit = digitValue(b)
            guard digit < base else { break }
            sawDigit = true
            let (times, o1) = value.multipliedReportingOverflow(by: base)
            let (plus, o2) = times.addingReportingOverflow(digit)
            if o1 || o2 { overflow = true }
            value = plus
        }
        if !sawDigit { return 0 }
        if overflow { return UInt64.max }
        return negative ? 0 &- value : value
    }
}
