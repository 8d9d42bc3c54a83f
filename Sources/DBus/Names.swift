// Validating value types for the names of the D-Bus specification.
//
// libdbus aborts the whole process when it is handed a malformed object path,
// interface, member or bus name, so every name is checked here, in Swift,
// before a message is built. Literals in our own source are trusted (a bad one
// is a bug and traps); anything from outside goes through `init(validating:)`.

/// A D-Bus name that failed validation: what kind of name, the text and why.
public struct InvalidNameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of name, for example "object path".
    public var kind: String
    /// The rejected text.
    public var text: String
    /// Why it was rejected.
    public var reason: String

    public var description: String { "invalid \(kind) \"\(text)\": \(reason)" }
}

private extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
}

/// The longest name the specification allows (bus, interface, member, error names).
let maximumNameLength = 255

/// Checks the dot-separated names shared by interfaces, errors and well-known bus names.
private func checkDotted(
    _ text: String, kind: String, allowHyphen: Bool, allowLeadingDigit: Bool
) throws(InvalidNameError) {
    let bytes = Array(text.utf8)
    func fail(_ reason: String) -> InvalidNameError { InvalidNameError(kind: kind, text: text, reason: reason) }
    if bytes.isEmpty { throw fail("it is empty") }
    if bytes.count > maximumNameLength { throw fail("it is longer than \(maximumNameLength) bytes") }
    var elements = 0
    var elementLength = 0
    for byte in bytes {
        if byte == UInt8(ascii: ".") {
            if elementLength == 0 { throw fail("it has an empty element") }
            elements += 1
            elementLength = 0
            continue
        }
        let ok = byte.isASCIILetter || byte == UInt8(ascii: "_")
            || (allowHyphen && byte == UInt8(ascii: "-"))
            || (byte.isASCIIDigit && (elementLength > 0 || allowLeadingDigit))
        if !ok {
            if byte.isASCIIDigit { throw fail("an element starts with a digit") }
            throw fail("it contains a character that is not allowed")
        }
        elementLength += 1
    }
    if elementLength == 0 { throw fail("it has an empty element") }
    elements += 1
    if elements < 2 { throw fail("it needs at least two elements separated by '.'") }
}

// MARK: - ObjectPath

/// An object path such as `/org/freedesktop/Notifications`.
public struct ObjectPath: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    /// Validates `text` as an object path.
    public init(validating text: String) throws(InvalidNameError) {
        try Self.check(text)
        rawValue = text
    }

    public init?(rawValue: String) { try? self.init(validating: rawValue) }

    /// A path written in our own source; a malformed literal is a programming error.
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    public static let root = ObjectPath("/")

    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    static func check(_ text: String) throws(InvalidNameError) {
        func fail(_ reason: String) -> InvalidNameError { InvalidNameError(kind: "object path", text: text, reason: reason) }
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { throw fail("it must start with '/'") }
        if bytes.count == 1 { return }
        if bytes.last == UInt8(ascii: "/") { throw fail("it must not end with '/'") }
        var previousSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousSlash { throw fail("it contains an empty element ('//')") }
                previousSlash = true
            } else {
                guard byte.isASCIILetter || byte.isASCIIDigit || byte == UInt8(ascii: "_") else {
                    throw fail("elements may only contain [A-Za-z0-9_]")
                }
                previousSlash = false
            }
        }
    }

    /// The path of a child object, `self/element`.
    public func appending(_ element: String) throws(InvalidNameError) -> ObjectPath {
        try ObjectPath(validating: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }
}

// MARK: - BusName

/// A bus name: unique (`:1.42`) or well-known (`org.freedesktop.Notifications`).
public struct BusName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `text` as a unique or well-known bus name.
    public init(validating text: String) throws(InvalidNameError) {
        if text.utf8.first == UInt8(ascii: ":") {
            let rest = String(decoding: text.utf8.dropFirst(), as: UTF8.self)
            do {
                try checkDotted(rest, kind: "bus name", allowHyphen: true, allowLeadingDigit: true)
            } catch {
                throw InvalidNameError(kind: "bus name", text: text, reason: error.reason)
            }
        } else {
            try checkDotted(text, kind: "bus name", allowHyphen: true, allowLeadingDigit: false)
        }
        rawValue = text
    }

    public init?(rawValue: String) { try? self.init(validating: rawValue) }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    /// Whether this is a unique connection name (starts with `:`).
    public var isUnique: Bool { rawValue.utf8.first == UInt8(ascii: ":") }
    public var description: String { rawValue }

    /// The message bus itself.
    public static let bus: BusName = "org.freedesktop.DBus"
}

// MARK: - InterfaceName

/// An interface name such as `org.freedesktop.Notifications`.
public struct InterfaceName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(validating text: String) throws(InvalidNameError) {
        try checkDotted(text, kind: "interface name", allowHyphen: false, allowLeadingDigit: false)
        rawValue = text
    }

    public init?(rawValue: String) { try? self.init(validating: rawValue) }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    public var description: String { rawValue }

    public static let dbus: InterfaceName = "org.freedesktop.DBus"
    public static let introspectable: InterfaceName = "org.freedesktop.DBus.Introspectable"
    public static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
    public static let peer: InterfaceName = "org.freedesktop.DBus.Peer"
}

// MARK: - MemberName

/// A method or signal name such as `Notify`.
public struct MemberName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(validating text: String) throws(InvalidNameError) {
        func fail(_ reason: String) -> InvalidNameError { InvalidNameError(kind: "member name", text: text, reason: reason) }
        let bytes = Array(text.utf8)
        if bytes.isEmpty { throw fail("it is empty") }
        if bytes.count > maximumNameLength { throw fail("it is longer than \(maximumNameLength) bytes") }
        if bytes[0].isASCIIDigit { throw fail("it starts with a digit") }
        for byte in bytes where !(byte.isASCIILetter || byte.isASCIIDigit || byte == UInt8(ascii: "_")) {
            throw fail("it may only contain [A-Za-z0-9_]")
        }
        rawValue = text
    }

    public init?(rawValue: String) { try? self.init(validating: rawValue) }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    public var description: String { rawValue }
}

// MARK: - ErrorName

/// An error name such as `org.freedesktop.DBus.Error.ServiceUnknown`.
public struct ErrorName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(validating text: String) throws(InvalidNameError) {
        try checkDotted(text, kind: "error name", allowHyphen: false, allowLeadingDigit: false)
        rawValue = text
    }

    public init?(rawValue: String) { try? self.init(validating: rawValue) }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    public var description: String { rawValue }

    // The errors of the message bus that callers most often need to tell apart.
    public static let failed: ErrorName = "org.freedesktop.DBus.Error.Failed"
    public static let noMemory: ErrorName = "org.freedesktop.DBus.Error.NoMemory"
    public static let serviceUnknown: ErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner: ErrorName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let noReply: ErrorName = "org.freedesktop.DBus.Error.NoReply"
    public static let timedOut: ErrorName = "org.freedesktop.DBus.Error.TimedOut"
    public static let timeout: ErrorName = "org.freedesktop.DBus.Error.Timeout"
    public static let disconnected: ErrorName = "org.freedesktop.DBus.Error.Disconnected"
    public static let noServer: ErrorName = "org.freedesktop.DBus.Error.NoServer"
    public static let fileNotFound: ErrorName = "org.freedesktop.DBus.Error.FileNotFound"
    public static let accessDenied: ErrorName = "org.freedesktop.DBus.Error.AccessDenied"
    public static let invalidArgs: ErrorName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let invalidSignature: ErrorName = "org.freedesktop.DBus.Error.InvalidSignature"
    public static let unknownMethod: ErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObject: ErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface: ErrorName = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownProperty: ErrorName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly: ErrorName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let matchRuleInvalid: ErrorName = "org.freedesktop.DBus.Error.MatchRuleInvalid"
    public static let limitsExceeded: ErrorName = "org.freedesktop.DBus.Error.LimitsExceeded"
}
