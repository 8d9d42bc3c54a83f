// The D-Bus type system as a tree, and signatures as its text form.

/// A complete D-Bus type: one case per type code of the specification.
///
/// A signature is this type written out (`a{sv}` is
/// `.array(.dictionaryEntry(key: .string, value: .variant))`); it is always
/// computed from the tree, never stored beside a value.
public enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    /// An array of `element`; `array(.dictionaryEntry(...))` is a dictionary.
    indirect case array(DBusType)
    /// A dictionary entry; only valid as the element of an array.
    indirect case dictionaryEntry(key: DBusType, value: DBusType)
    /// A struct with one or more fields.
    case structure([DBusType])

    /// A dictionary `a{kv}`.
    public static func dictionary(key: DBusType, value: DBusType) -> DBusType {
        .array(.dictionaryEntry(key: key, value: value))
    }

    /// Whether this is a basic (non-container) type, usable as a dictionary key.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionaryEntry, .structure: false
        default: true
        }
    }

    /// The type code character of this type (`a` for arrays, `(` for structs, `{` for entries).
    var code: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .boolean: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .variant: UInt8(ascii: "v")
        case .array: UInt8(ascii: "a")
        case .dictionaryEntry: UInt8(ascii: "{")
        case .structure: UInt8(ascii: "(")
        }
    }

    /// Appends this type's signature characters to `out`.
    func write(into out: inout [UInt8]) {
        switch self {
        case .array(let element):
            out.append(UInt8(ascii: "a"))
            element.write(into: &out)
        case .dictionaryEntry(let key, let value):
            out.append(UInt8(ascii: "{"))
            key.write(into: &out)
            value.write(into: &out)
            out.append(UInt8(ascii: "}"))
        case .structure(let fields):
            out.append(UInt8(ascii: "("))
            for field in fields { field.write(into: &out) }
            out.append(UInt8(ascii: ")"))
        default:
            out.append(code)
        }
    }

    /// The signature text of this single complete type, e.g. `a{sv}`.
    public var signatureText: String {
        // Basic types and variants are one character: no buffer needed.
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .variant: return "v"
        default: break
        }
        var out: [UInt8] = []
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { signatureText }

    /// The length of this type's signature text, without building it.
    var signatureLength: Int {
        switch self {
        case .array(let element): 1 + element.signatureLength
        case .dictionaryEntry(let key, let value): 2 + key.signatureLength + value.signatureLength
        case .structure(let fields): 2 + fields.reduce(0) { $0 + $1.signatureLength }
        default: 1
        }
    }
}

// MARK: - Signature

/// A D-Bus signature: a sequence of zero or more complete types, validated.
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The complete types, in order.
    public let types: [DBusType]

    /// The signature of these types; fails if they break the specification's limits.
    public init(_ types: [DBusType]) throws(InvalidNameError) {
        self.types = types
        let text = rawValue
        if text.utf8.count > Signature.maximumLength {
            throw InvalidNameError(kind: "signature", text: text, reason: "it is longer than 255 bytes")
        }
        for type in types { try Signature.checkNesting(type, text: text) }
    }

    /// Parses and validates signature text such as `susssasa{sv}i`.
    public init(validating text: String) throws(InvalidNameError) {
        var parser = SignatureParser(bytes: Array(text.utf8), text: text)
        types = try parser.parseAll()
    }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    /// The empty signature.
    public static let empty = try! Signature([])  // constant input, cannot fail

    /// The text form.
    public var rawValue: String {
        var out: [UInt8] = []
        for type in types { type.write(into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { rawValue }

    /// The specification's limits.
    public static let maximumLength = 255
    public static let maximumArrayDepth = 32
    public static let maximumStructDepth = 32

    static func checkNesting(_ type: DBusType, text: String) throws(InvalidNameError) {
        func walk(_ type: DBusType, arrays: Int, structs: Int) throws(InvalidNameError) {
            if arrays > maximumArrayDepth {
                throw InvalidNameError(kind: "signature", text: text, reason: "arrays are nested deeper than 32")
            }
            if structs > maximumStructDepth {
                throw InvalidNameError(kind: "signature", text: text, reason: "structs are nested deeper than 32")
            }
            switch type {
            case .array(let element):
                if case .dictionaryEntry(let key, let value) = element {
                    guard key.isBasic else {
                        throw InvalidNameError(kind: "signature", text: text, reason: "a dictionary key must be a basic type")
                    }
                    try walk(value, arrays: arrays + 1, structs: structs + 1)
                } else {
                    try walk(element, arrays: arrays + 1, structs: structs)
                }
            case .dictionaryEntry:
                throw InvalidNameError(kind: "signature", text: text, reason: "a dictionary entry must be an array's element")
            case .structure(let fields):
                if fields.isEmpty {
                    throw InvalidNameError(kind: "signature", text: text, reason: "a struct needs at least one field")
                }
                for field in fields { try walk(field, arrays: arrays, structs: structs + 1) }
            default:
                break
            }
        }
        try walk(type, arrays: 0, structs: 0)
    }
}

/// A recursive-descent parser of signature text.
private struct SignatureParser {
    let bytes: [UInt8]
    let text: String
    var index = 0

    func fail(_ reason: String) -> InvalidNameError {
        InvalidNameError(kind: "signature", text: text, reason: reason)
    }

    mutating func parseAll() throws(InvalidNameError) -> [DBusType] {
        if bytes.count > Signature.maximumLength { throw fail("it is longer than 255 bytes") }
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(arrays: 0, structs: 0))
        }
        return types
    }

    mutating func parseOne(arrays: Int, structs: Int) throws(InvalidNameError) -> DBusType {
        guard index < bytes.count else { throw fail("it ends in the middle of a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            if arrays + 1 > Signature.maximumArrayDepth { throw fail("arrays are nested deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                if structs + 1 > Signature.maximumStructDepth { throw fail("structs are nested deeper than 32") }
                let key = try parseOne(arrays: arrays + 1, structs: structs + 1)
                guard key.isBasic else { throw fail("a dictionary key must be a basic type") }
                let value = try parseOne(arrays: arrays + 1, structs: structs + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("a dictionary entry must hold exactly one key and one value")
                }
                index += 1
                return .array(.dictionaryEntry(key: key, value: value))
            }
            return .array(try parseOne(arrays: arrays + 1, structs: structs))
        case UInt8(ascii: "("):
            if structs + 1 > Signature.maximumStructDepth { throw fail("structs are nested deeper than 32") }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("a '(' is not closed") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseOne(arrays: arrays, structs: structs + 1))
            }
            if fields.isEmpty { throw fail("a struct needs at least one field") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            throw fail("a dictionary entry must be an array's element")
        case UInt8(ascii: ")"), UInt8(ascii: "}"):
            throw fail("an unexpected '\(Character(Unicode.Scalar(code)))'")
        default:
            throw fail("'\(Character(Unicode.Scalar(code)))' is not a type code")
        }
    }
}
