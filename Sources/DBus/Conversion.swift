// Typed conversion between Swift values and `Value`.

/// A value received with a different type than the caller expected.
public struct TypeMismatchError: Error, Hashable, Sendable, CustomStringConvertible {
    public var expected: DBusType
    public var found: DBusType
    public var description: String { "expected a value of type \(expected), found \(found)" }
}

/// A Swift type with a fixed D-Bus type.
///
/// ```swift
/// let hints: [String: Value] = ["urgency": .byte(2)]
/// hints.dbusValue.signature            // "a{sv}"
/// try [String].init(dbusValue: reply)  // from an `as`
/// ```
public protocol DBusRepresentable {
    /// The D-Bus type values of this Swift type are written as.
    static var dbusType: DBusType { get }
    /// This value on the wire.
    var dbusValue: Value { get }
    /// Reads a value of this type; variants are looked through.
    init(dbusValue: Value) throws(TypeMismatchError)
}

/// A basic D-Bus type, usable as a dictionary key.
public protocol DBusBasicRepresentable: DBusRepresentable, Hashable {}

extension DBusRepresentable {
    static func mismatch(_ value: Value) -> TypeMismatchError {
        TypeMismatchError(expected: dbusType, found: value.type)
    }
}

// A macro would be nicer; the basic types are few enough to spell out.
extension UInt8: DBusBasicRepresentable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: Value { .byte(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .byte(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Bool: DBusBasicRepresentable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: Value { .boolean(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .boolean(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int16: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: Value { .int16(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .int16(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt16: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: Value { .uint16(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .uint16(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int32: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: Value { .int32(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .int32(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt32: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: Value { .uint32(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .uint32(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Int64: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: Value { .int64(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .int64(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension UInt64: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: Value { .uint64(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .uint64(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Double: DBusBasicRepresentable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: Value { .double(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .double(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension String: DBusBasicRepresentable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: Value { .string(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .string(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension ObjectPath: DBusBasicRepresentable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: Value { .objectPath(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .objectPath(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

extension Signature: DBusBasicRepresentable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: Value { .signature(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .signature(let v) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        self = v
    }
}

/// `Value` itself stands for a variant: any value, carried with its type.
extension Value: DBusRepresentable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: Value { .variant(self) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        self = dbusValue.unwrappingVariants
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: Value { .array(element: Element.dbusType, map(\.dbusValue)) }
    public init(dbusValue: Value) throws(TypeMismatchError) {
        guard case .array(_, let items) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try Element(dbusValue: item)) }
        self = result
    }
}

extension Dictionary: DBusRepresentable where Key: DBusBasicRepresentable, Value: DBusRepresentable {
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBus.Value {
        .dictionary(key: Key.dbusType, value: Value.dbusType, map { .init(key: $0.key.dbusValue, value: $0.value.dbusValue) })
    }
    public init(dbusValue: DBus.Value) throws(TypeMismatchError) {
        guard case .dictionary(_, _, let entries) = dbusValue.unwrappingVariants else { throw Self.mismatch(dbusValue) }
        var result: [Key: Value] = [:]
        for entry in entries { result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value) }
        self = result
    }
}
