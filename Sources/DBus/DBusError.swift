internal import CDBus

/// The call a `DBusError` came from: where it was sent and which member.
public struct CallDescription: Hashable, Sendable, CustomStringConvertible {
    public var destination: String?
    public var path: String
    public var interface: String?
    public var member: String

    public init(destination: String?, path: String, interface: String?, member: String) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
    }

    public var description: String {
        let method = interface.map { "\($0).\(member)" } ?? member
        return "\(method) on \(path)" + (destination.map { " at \($0)" } ?? "")
    }
}

/// An error from the bus, a remote peer or libdbus itself: the D-Bus error name,
/// its message, and the call that failed (when there was one).
///
/// ```swift
/// do { try connection.call(message) }
/// catch let error as DBusError where error.name == .serviceUnknown { ... }
/// ```
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.freedesktop.DBus.Error.ServiceUnknown`.
    public var name: ErrorName
    /// The human-readable message that came with it.
    public var message: String
    /// The method call that failed, when the error answers one.
    public var call: CallDescription?

    public init(name: ErrorName, message: String, call: CallDescription? = nil) {
        self.name = name
        self.message = message
        self.call = call
    }

    public var description: String {
        var text = "\(name.rawValue): \(message)"
        if let call { text += " (calling \(call))" }
        return text
    }

    /// Takes over a set `DBusError` of libdbus and frees it; the one place C errors are converted.
    static func take(_ error: inout CDBus.DBusError, call: CallDescription? = nil) -> DBusError {
        defer { dbus_error_free(&error) }
        let name = error.name.map { String(cString: $0) } ?? ErrorName.failed.rawValue
        let message = error.message.map { String(cString: $0) } ?? ""
        return DBusError(name: ErrorName(rawValue: name) ?? .failed, message: message, call: call)
    }

    /// Runs `body` with an initialised libdbus error; throws it if `body` set it.
    static func check<T>(
        call: @autoclosure () -> CallDescription? = nil, _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T
    ) throws(DBusError) -> T {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let result = body(&error)
        if dbus_error_is_set(&error) != 0 { throw take(&error, call: call()) }
        return result
    }

    static let outOfMemory = DBusError(name: .noMemory, message: "libdbus ran out of memory")
}
