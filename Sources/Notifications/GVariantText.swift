// GVariant's text format (what `gdbus call` and notify-send's `variant` hints
// take), for the values D-Bus can carry.
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// Why GVariant text could not be read.
public struct GVariantTextError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A parser of GVariant text: numbers (`5` is an int32, `1.5` a double),
/// `true`/`false`, quoted strings, type keywords (`uint32 7`, `objectpath '/a'`),
/// `@TYPE value`, variants `<...>`, arrays `[...]`, dictionaries `{k: v}` and
/// tuples `(a, b)`. Maybe types and byte strings have no D-Bus form and are refused.
public enum GVariantText {
    /// Parses one value; the whole text must be consumed.
    public static func parse(_ text: String) throws(GVariantTextError) -> Value {
        var parser = Parser(bytes: Array(text.utf8))
        let node = try parser.parseValue()
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.fail("unexpected text after the value") }
        return try resolve(node, expected: nil)
    }

    indirect enum Node {
        case integer(String)
        case float(Double)
        case boolean(Bool)
        case string(String)
        case typed(DBusType, Node)
        case variant(Node)
        case array([Node])
        case dictionary([(Node, Node)])
        case tuple([Node])
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0

        func fail(_ message: String) -> GVariantTextError {
            GVariantTextError(message: "\(message) at offset \(index)")
        }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ char: Character) throws(GVariantTextError) {
            skipSpace()
            guard index < bytes.count, bytes[index] == char.asciiValue! else { throw fail("expected '\(char)'") }
            index += 1
        }

        mutating func peek() -> UInt8? {
            skipSpace()
            return index < bytes.count ? bytes[index] : nil
        }

        mutating func word() -> String {
            let start = index
            while index < bytes.count, (bytes[index] >= 0x61 && bytes[index] <= 0x7A) || (bytes[index] >= 0x30 && bytes[index] <= 0x39) {
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static let keywords: [String: DBusType] = [
            "boolean": .boolean, "byte": .byte, "int16": .int16, "uint16": .uint16, "int32": .int32,
            "uint32": .uint32, "int64": .int64, "uint64": .uint64, "handle": .int32, "double": .double,
            "string": .string, "objectpath": .objectPath, "signature": .signature,
        ]

        mutating func parseValue(depth: Int = 0) throws(GVariantTextError) -> Node {
            guard depth < Value.maximumNesting else { throw fail("nested too deeply") }
            guard let c = peek() else { throw fail("expected a value") }
            switch c {
            case UInt8(ascii: "<"):
                index += 1
                let inner = try parseValue(depth: depth + 1)
                try expect(">")
                return .variant(inner)
            case UInt8(ascii: "["):
                index += 1
                var items: [Node] = []
                if peek() == UInt8(ascii: "]") {
                    index += 1
                    return .array([])
                }
                while true {
                    items.append(try parseValue(depth: depth + 1))
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect("]")
                    return .array(items)
                }
            case UInt8(ascii: "("):
                index += 1
                var items: [Node] = []
                if peek() == UInt8(ascii: ")") { throw fail("an empty tuple has no D-Bus form") }
                while true {
                    items.append(try parseValue(depth: depth + 1))
                    if peek() == UInt8(ascii: ",") {
                        index += 1
                        if peek() == UInt8(ascii: ")") { index += 1; return .tuple(items) }
                        continue
                    }
                    try expect(")")
                    return .tuple(items)
                }
            case UInt8(ascii: "{"):
                index += 1
                var entries: [(Node, Node)] = []
                if peek() == UInt8(ascii: "}") {
                    index += 1
                    return .dictionary([])
                }
                while true {
                    let key = try parseValue(depth: depth + 2)
                    try expect(":")
                    let value = try parseValue(depth: depth + 2)
                    entries.append((key, value))
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect("}")
                    return .dictionary(entries)
                }
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                return .string(try parseString())
            case UInt8(ascii: "@"):
                index += 1
                let type = try parseType()
                return .typed(type, try parseValue(depth: depth + 1))
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try parseNumber()
            default:
                let start = index
                let name = word()
                switch name {
                case "true": return .boolean(true)
                case "false": return .boolean(false)
                case "nothing", "just": throw fail("maybe values have no D-Bus form")
                default:
                    if let type = Parser.keywords[name] { return .typed(type, try parseValue(depth: depth)) }
                    index = start
                    throw fail("unknown keyword '\(name)'")
                }
            }
        }

        mutating func parseNumber() throws(GVariantTextError) -> Node {
            let start = index
            if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            var isFloat = false
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "0"), bytes[index + 1] | 0x20 == UInt8(ascii: "x") {
                index += 2
                while index < bytes.count, isHex(bytes[index]) { index += 1 }
            } else {
                while index < bytes.count {
                    let b = bytes[index]
                    if (0x30...0x39).contains(b) {
                        index += 1
                    } else if b == UInt8(ascii: ".") || b | 0x20 == UInt8(ascii: "e") {
                        isFloat = true
                        index += 1
                        if b | 0x20 == UInt8(ascii: "e"), index < bytes.count,
                            bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")
                        {
                            index += 1
                        }
                    } else {
                        break
                    }
                }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isFloat {
                var end: UnsafeMutablePointer<CChar>? = nil
                let value = text.withCString { p -> (Double, Bool) in
                    let v = strtod(p, &end)
                    return (v, end.map { $0.pointee == 0 } ?? false)
                }
                guard value.1 else { throw fail("'\(text)' is not a number") }
                return .float(value.0)
            }
            guard text.contains(where: \.isHexDigit) else { throw fail("'\(text)' is not a number") }
            return .integer(text)
        }

        func isHex(_ b: UInt8) -> Bool {
            (0x30...0x39).contains(b) || (0x61...0x66).contains(b | 0x20)
        }

        mutating func parseString() throws(GVariantTextError) -> String {
            let quote = bytes[index]
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let b = bytes[index]
                index += 1
                if b == quote {
                    guard let text = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                    return text
                }
                guard b == UInt8(ascii: "\\") else { out.append(b); continue }
                guard index < bytes.count else { break }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "v"): out.append(0x0B)
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    let count = e == UInt8(ascii: "u") ? 4 : 8
                    guard index + count <= bytes.count,
                        let code = UInt32(String(decoding: bytes[index..<index + count], as: UTF8.self), radix: 16),
                        let scalar = Unicode.Scalar(code)
                    else { throw fail("bad \\\(Character(Unicode.Scalar(e))) escape") }
                    index += count
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: out.append(e)
                }
            }
            throw fail("unterminated string")
        }

        mutating func parseType() throws(GVariantTextError) -> DBusType {
            skipSpace()
            let start = index
            // Read one complete type's characters, balancing brackets.
            var depth = 0
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "(") || b == UInt8(ascii: "{") { depth += 1 }
                if b == UInt8(ascii: ")") || b == UInt8(ascii: "}") { depth -= 1 }
                index += 1
                if depth == 0 && b != UInt8(ascii: "a") { break }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let signature = try? Signature(validating: text), signature.types.count == 1 else {
                throw fail("'\(text)' is not a D-Bus type")
            }
            return signature.types[0]
        }
    }

    // MARK: - Giving the parsed text its types

    static func resolve(_ node: Node, expected: DBusType?) throws(GVariantTextError) -> Value {
        func fail(_ message: String) -> GVariantTextError { GVariantTextError(message: message) }
        func mismatch(_ what: String) -> GVariantTextError {
            fail("\(what) cannot be a value of type \(expected?.signatureText ?? "?")")
        }
        switch node {
        case .integer(let text):
            let negative = text.hasPrefix("-")
            var digits = Substring(text.drop { $0 == "-" || $0 == "+" })
            var radix = 10
            if digits.lowercased().hasPrefix("0x") {
                digits = digits.dropFirst(2)
                radix = 16
            }
            guard let magnitude = UInt64(digits, radix: radix) else { throw fail("number \(text) is out of range") }
            func signed<T: FixedWidthInteger>(_: T.Type) throws(GVariantTextError) -> T {
                if negative {
                    guard T.isSigned, magnitude <= UInt64(T.max) + 1 else { throw fail("number \(text) is out of range") }
                    return magnitude == UInt64(T.max) + 1 ? T.min : 0 - T(magnitude)
                }
                guard magnitude <= UInt64(T.max) else { throw fail("number \(text) is out of range") }
                return T(magnitude)
            }
            switch expected {
            case nil, .int32?: return .int32(try signed(Int32.self))
            case .byte?: return .byte(try signed(UInt8.self))
            case .int16?: return .int16(try signed(Int16.self))
            case .uint16?: return .uint16(try signed(UInt16.self))
            case .uint32?: return .uint32(try signed(UInt32.self))
            case .int64?: return .int64(try signed(Int64.self))
            case .uint64?: return .uint64(try signed(UInt64.self))
            case .double?: return .double(Double(try signed(Int64.self)))
            default: throw mismatch("number \(text)")
            }
        case .float(let number):
            guard expected == nil || expected == .double else { throw mismatch("number \(number)") }
            return .double(number)
        case .boolean(let flag):
            guard expected == nil || expected == .boolean else { throw mismatch("\(flag)") }
            return .boolean(flag)
        case .string(let text):
            switch expected {
            case nil, .string?:
                if text.utf8.contains(0) { throw fail("strings cannot contain NUL") }
                return .string(text)
            case .objectPath?:
                guard let path = ObjectPath(rawValue: text) else { throw fail("'\(text)' is not an object path") }
                return .objectPath(path)
            case .signature?:
                guard let signature = try? Signature(validating: text) else { throw fail("'\(text)' is not a signature") }
                return .signature(signature)
            default: throw mismatch("string '\(text)'")
            }
        case .typed(let type, let inner):
            if let expected, expected != type { throw mismatch("a value of type \(type)") }
            return try resolve(inner, expected: type)
        case .variant(let inner):
            guard expected == nil || expected == .variant else { throw mismatch("a variant") }
            return .variant(try resolve(inner, expected: nil))
        case .array(let items):
            var elementType: DBusType
            if case .array(let element)? = expected {
                elementType = element
            } else if expected == nil {
                guard let first = items.first else { throw fail("cannot tell the type of an empty array; write @as [] or similar") }
                // Integers and floats together make doubles, as in GVariant.
                let hasFloat = items.contains { if case .float = $0 { true } else { false } }
                let allNumbers = items.allSatisfy { switch $0 { case .integer, .float: true; default: false } }
                elementType = hasFloat && allNumbers ? .double : try resolve(first, expected: nil).type
            } else {
                throw mismatch("an array")
            }
            if case .dictionaryEntry = elementType { throw mismatch("an array") }
            var values: [Value] = []
            for item in items { values.append(try resolve(item, expected: elementType)) }
            return .array(element: elementType, values)
        case .dictionary(let entries):
            var keyType: DBusType
            var valueType: DBusType
            if case .array(.dictionaryEntry(let k, let v))? = expected {
                keyType = k
                valueType = v
            } else if expected == nil {
                guard let first = entries.first else { throw fail("cannot tell the type of an empty dictionary; write @a{sv} {} or similar") }
                keyType = try resolve(first.0, expected: nil).type
                valueType = try resolve(first.1, expected: nil).type
            } else {
                throw mismatch("a dictionary")
            }
            guard keyType.isBasic else { throw fail("dictionary keys must be basic values") }
            var result: [Value.DictionaryEntry] = []
            for (key, value) in entries {
                result.append(.init(key: try resolve(key, expected: keyType), value: try resolve(value, expected: valueType)))
            }
            return .dictionary(key: keyType, value: valueType, result)
        case .tuple(let items):
            if case .structure(let types)? = expected {
                guard types.count == items.count else { throw mismatch("a tuple of \(items.count)") }
                var values: [Value] = []
                for (item, type) in zip(items, types) { values.append(try resolve(item, expected: type)) }
                return .structure(values)
            }
            guard expected == nil else { throw mismatch("a tuple") }
            var values: [Value] = []
            for item in items { values.append(try resolve(item, expected: nil)) }
            return .structure(values)
        }
    }
}
