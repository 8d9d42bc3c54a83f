// A D-Bus value: one case per type code, matching the wire one-to-one.

/// A D-Bus value.
///
/// Containers carry the *types* they need to be written (an empty `as` still
/// has to say it holds strings), never a signature string: `type` and
/// `signature` are always computed.
///
/// ```swift
/// let hints: Value = .dictionary(key: .string, value: .variant, [
///     .init(key: .string("urgency"), value: .variant(.byte(2))),
/// ])
/// hints.type.signatureText  // "a{sv}"
/// ```
public enum Value: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    /// A file descriptor. Received descriptors are new ones the receiver owns and must close.
    case unixFD(Int32)
    /// A value of any type, carrying its type on the wire.
    indirect case variant(Value)
    /// An array whose elements all have type `element`.
    case array(element: DBusType, [Value])
    /// A dictionary (`a{kv}`) in wire order; `key` must be a basic type.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    /// A struct of one or more fields.
    case structure([Value])

    /// One key/value pair of a dictionary.
    public struct DictionaryEntry: Hashable, Sendable {
        public var key: Value
        public var value: Value
        public init(key: Value, value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// The complete type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    /// The signature of this value's type, e.g. `a{sv}`.
    public var signature: String { type.signatureText }
}

// MARK: - Validation

/// Why a value cannot be sent: the path to the offending part and the reason.
public struct InvalidValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where in the value, e.g. `argument 4` or `argument 6[urgency]`.
    public var location: String
    public var reason: String
    public var description: String { "\(location): \(reason)" }
}

extension Value {
    /// The deepest container nesting libdbus accepts in a message body
    /// (arrays, structs, dictionary entries and variants together).
    public static let maximumNesting = 64

    /// Checks everything libdbus would abort or the bus would reject on:
    /// strings with NUL, elements that do not match their array's type,
    /// non-basic dictionary keys, empty structs and nesting beyond the limits.
    public func validate(at location: String = "value") throws(InvalidValueError) {
        do {
            try validate(depth: 0)
        } catch {
            throw InvalidValueError(location: location + error.location, reason: error.reason)
        }
    }

    /// Validates argument `index` (from 0) of a message; the location is only spelled out on failure.
    func validateArgument(_ index: Int) throws(InvalidValueError) {
        do {
            try validate(depth: 0)
        } catch {
            throw InvalidValueError(location: "argument \(index + 1)" + error.location, reason: error.reason)
        }
    }

    /// The recursive check. Errors carry the path below this value (`[2]`, `.0`,
    /// `[urgency]`); each level adds its part while the error unwinds, so the
    /// success path builds no strings.
    private func validate(depth: Int) throws(InvalidValueError) {
        func fail(_ reason: String) -> InvalidValueError { InvalidValueError(location: "", reason: reason) }
        func within(_ segment: @autoclosure () -> String, _ body: () throws(InvalidValueError) -> Void) throws(InvalidValueError) {
            do {
                try body()
            } catch {
                throw InvalidValueError(location: segment() + error.location, reason: error.reason)
            }
        }
        switch self {
        case .string(let text):
            if text.utf8.contains(0) { throw fail("string contains a NUL byte") }
        case .variant(let inner):
            if depth + 1 > Value.maximumNesting { throw fail("nested deeper than \(Value.maximumNesting) containers") }
            switch inner {
            case .array, .dictionary, .structure:
                do throws(InvalidNameError) {
                    let type = inner.type
                    if type.signatureLength > Signature.maximumLength {
                        throw InvalidNameError(kind: "signature", text: "", reason: "it is longer than 255 bytes")
                    }
                    try Signature.checkNesting(type, text: "")
                } catch {
                    throw fail("variant holds a value of invalid type: \(error.reason)")
                }
            default: break
            }
            try inner.validate(depth: depth + 1)
        case .array(let element, let elements):
            if depth + 1 > Value.maximumNesting { throw fail("nested deeper than \(Value.maximumNesting) containers") }
            if case .dictionaryEntry = element { throw fail("use .dictionary for an array of dictionary entries") }
            for (index, item) in elements.enumerated() {
                if item.type != element {
                    throw fail("element \(index) has type \(item.type) but the array holds \(element)")
                }
                try within("[\(index)]") { () throws(InvalidValueError) in try item.validate(depth: depth + 1) }
            }
        case .dictionary(let keyType, let valueType, let entries):
            if depth + 2 > Value.maximumNesting { throw fail("nested deeper than \(Value.maximumNesting) containers") }
            if !keyType.isBasic { throw fail("dictionary key type \(keyType) is not a basic type") }
            for entry in entries {
                try within("[\(entry.key.shortDescription)]") { () throws(InvalidValueError) in
                    if entry.key.type != keyType {
                        throw fail("key has type \(entry.key.type) but the dictionary's keys are \(keyType)")
                    }
                    if entry.value.type != valueType {
                        throw fail("value has type \(entry.value.type) but the dictionary's values are \(valueType)")
                    }
                    try entry.key.validate(depth: depth + 2)
                    try entry.value.validate(depth: depth + 2)
                }
            }
        case .structure(let fields):
            if depth + 1 > Value.maximumNesting { throw fail("nested deeper than \(Value.maximumNesting) containers") }
            if fields.isEmpty { throw fail("a struct needs at least one field") }
            for (index, field) in fields.enumerated() {
                try within(".\(index)") { () throws(InvalidValueError) in try field.validate(depth: depth + 1) }
            }
        case .unixFD(let fd):
            if fd < 0 { throw fail("file descriptor \(fd) is negative") }
        default:
            break
        }
    }

    /// A short rendering for error locations.
    var shortDescription: String {
        switch self {
        case .string(let text): text
        case .objectPath(let path): path.rawValue
        default: "\(self)"
        }
    }
}

// MARK: - Convenience

extension Value {
    /// An array of strings, `as`.
    public static func strings(_ items: [String]) -> Value {
        .array(element: .string, items.map(Value.string))
    }

    /// The dictionary type most APIs use, `a{sv}`, in the given order.
    public static func vardict(_ entries: [(String, Value)]) -> Value {
        .dictionary(key: .string, value: .variant, entries.map { .init(key: .string($0.0), value: .variant($0.1)) })
    }

    /// The value inside any number of variants.
    public var unwrappingVariants: Value {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// What one variant holds (this value itself when it is no variant): an `a{sv}` entry's value as
    /// its sender put it, a variant inside kept.
    public var variantContents: Value {
        if case .variant(let inner) = self { return inner }
        return self
    }

    /// This value as a string, if it is one (looking through variants).
    public var stringValue: String? {
        if case .string(let text) = unwrappingVariants { return text }
        return nil
    }

    /// This value as an unsigned 32-bit number, if it is one (looking through variants).
    public var uint32Value: UInt32? {
        if case .uint32(let number) = unwrappingVariants { return number }
        return nil
    }

    /// The elements of an array, if this is one (looking through variants).
    public var arrayElements: [Value]? {
        if case .array(_, let items) = unwrappingVariants { return items }
        return nil
    }

    /// The entries of a dictionary, if this is one (looking through variants).
    public var dictionaryEntries: [DictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrappingVariants { return entries }
        return nil
    }
}
