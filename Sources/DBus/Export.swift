// Objects this connection serves: method handlers, properties, introspection.

/// A named argument of a method or signal, for introspection.
public struct Parameter: Hashable, Sendable {
    public var name: String
    public var type: DBusType
    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// An incoming method call, as a handler sees it.
public struct MethodCall {
    /// The message itself (sender, serial, flags).
    public let message: Message
    /// Its decoded arguments, already checked against the method's declared inputs.
    public let arguments: [Value]
    /// The unique name of the caller.
    public var sender: String? { message.sender }
}

/// Thrown by a method handler that answers later itself (with `send(call.message.makeReturn(…))`,
/// or never, as a hung peer would): no reply is sent now.
public struct ReplyLater: Error, Sendable {
    public init() {}
}

/// A method an exported object answers.
public struct ExportedMethod {
    public var name: MemberName
    public var inputs: [Parameter]
    public var outputs: [Parameter]
    /// Returns the reply's arguments, or throws: a `DBusError` goes back with
    /// its name and message, any other error as `org.freedesktop.DBus.Error.Failed`.
    public var handler: (MethodCall) throws -> [Value]
    /// For a method whose one output is an array: hands the elements over one at a time.
    var streamer: ((MethodCall, _ add: (Value) throws -> Void) throws -> Void)?

    public init(
        _ name: MemberName, inputs: [Parameter] = [], outputs: [Parameter] = [],
        handler: @escaping (MethodCall) throws -> [Value]
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }

    /// A method whose one output, `output`, is an array written as `produce` hands over its
    /// elements (`Message.appendArray`): a listing of 100,000 rows never exists as 100,000 values.
    public init(
        _ name: MemberName, inputs: [Parameter] = [], streaming output: Parameter,
        produce: @escaping (MethodCall, _ add: (Value) throws -> Void) throws -> Void
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = [output]
        self.handler = { _ in [] }
        self.streamer = produce
    }
}

/// A signal an exported object emits, for introspection.
public struct ExportedSignal: Hashable, Sendable {
    public var name: MemberName
    public var arguments: [Parameter]
    public init(_ name: MemberName, arguments: [Parameter] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// A property served through `org.freedesktop.DBus.Properties`.
public struct ExportedProperty {
    public var name: String
    public var type: DBusType
    public var get: () throws -> Value
    /// Nil for a read-only property.
    public var set: ((Value) throws -> Void)?

    public init(_ name: String, type: DBusType, get: @escaping () throws -> Value, set: ((Value) throws -> Void)? = nil) {
        self.name = name
        self.type = type
        self.get = get
        self.set = set
    }
}

/// One interface of an exported object.
public struct ExportedInterface {
    public var name: InterfaceName
    public var methods: [ExportedMethod]
    public var signals: [ExportedSignal]
    public var properties: [ExportedProperty]

    public init(
        _ name: InterfaceName, methods: [ExportedMethod] = [], signals: [ExportedSignal] = [],
        properties: [ExportedProperty] = []
    ) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }
}

/// An object served at a path. `org.freedesktop.DBus.Introspectable` and
/// `org.freedesktop.DBus.Properties` are answered for it automatically
/// (and `org.freedesktop.DBus.Peer` by libdbus).
///
/// ```swift
/// let echo = ExportedObject(interfaces: [
///     ExportedInterface("org.example.Echo", methods: [
///         ExportedMethod("Echo", inputs: [Parameter("value", .variant)], outputs: [Parameter("value", .variant)]) {
///             $0.arguments
///         },
///     ]),
/// ])
/// connection.export(echo, at: "/org/example/Echo")
/// ```
public final class ExportedObject {
    public var interfaces: [ExportedInterface]
    public init(interfaces: [ExportedInterface]) { self.interfaces = interfaces }

    func interface(_ name: InterfaceName) -> ExportedInterface? {
        interfaces.first { $0.name == name }
    }
}

extension Connection {
    /// Serves `object` at `path` (replacing any object there).
    public func export(_ object: ExportedObject, at path: ObjectPath) {
        installFilter()
        objects.removeAll { $0.path == path }
        objects.append((path, object))
    }

    /// Stops serving the object at `path`.
    public func unexport(_ path: ObjectPath) {
        objects.removeAll { $0.path == path }
    }

    func object(at path: ObjectPath) -> ExportedObject? {
        objects.first { $0.path == path }?.object
    }

    /// Emits `PropertiesChanged` for properties of `interface` at `path`.
    public func emitPropertiesChanged(path: ObjectPath, interface: InterfaceName, changed: [String: Value]) throws {
        try emit(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [
                .string(interface.rawValue),
                .vardict(changed.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
                .array(element: .string, []),
            ])
    }

    /// Answers every method call that reaches this connection: an exported object's method,
    /// introspection of it and of the nodes above it (so tools can walk down to it), and an
    /// error for anything else (`UnknownObject` where nothing is, `UnknownMethod` or
    /// `UnknownInterface` where something is), so no caller waits for a timeout. Only
    /// `org.freedesktop.DBus.Peer` is left to libdbus, which answers it.
    func dispatchMethodCall(_ message: Message) -> Bool {
        if message.interface == .peer { return false }
        let reply: Message?
        do {
            if let answered = try answer(message) {
                reply = answered
            } else {
                let path = message.path?.rawValue ?? "?"
                throw DBusError(name: .unknownObject, message: "No object at \(path)")
            }
        } catch is ReplyLater {
            return true
        } catch let error as DBusError {
            reply = try? message.makeError(name: error.name, message: error.message)
        } catch {
            reply = try? message.makeError(name: .failed, message: "\(error)")
        }
        if let reply, !message.noReplyExpected { _ = try? send(reply) }
        return true
    }

    private func hasChildren(_ path: ObjectPath) -> Bool {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        return objects.contains { $0.path.rawValue.hasPrefix(prefix) }
    }

    /// The reply for `message`, or nil when nothing here is at its path.
    private func answer(_ message: Message) throws -> Message? {
        guard let path = message.path, let member = message.member else { return nil }
        let interface = message.interface
        let object = object(at: path)
        guard object != nil || hasChildren(path) else { return nil }

        if interface == .introspectable || (interface == nil && member == "Introspect") {
            guard member == "Introspect" else { throw unknownMethod(message) }
            return try message.makeReturn([.string(introspectionXML(path: path, object: object))])
        }
        guard let object else {
            // A node on the way to an object: only introspectable.
            throw DBusError(name: interface == nil ? .unknownMethod : .unknownInterface,
                            message: "\(path) has no methods; it only leads to objects below it (Introspect)")
        }

        if interface == .properties {
            return try message.makeReturn(try answerProperties(message, object: object))
        }
        let candidates = interface.map { name in object.interface(name).map { [$0] } ?? [] } ?? object.interfaces
        if let interface, candidates.isEmpty {
            throw DBusError(name: .unknownInterface, message: "No interface \(interface) at \(path)")
        }
        for candidate in candidates {
            guard let method = candidate.methods.first(where: { $0.name == member }) else { continue }
            let expected = method.inputs.map(\.type.signatureText).joined()
            guard message.signature == expected else {
                throw DBusError(
                    name: .invalidArgs,
                    message: "\(candidate.name).\(member) takes signature '\(expected)', got '\(message.signature)'")
            }
            if let streamer = method.streamer, case .array(let element) = method.outputs[0].type {
                let reply = try message.makeReturn()
                try reply.appendArray(of: element) { add in
                    try streamer(MethodCall(message: message, arguments: message.arguments()), add)
                }
                return reply
            }
            let outputs = try method.handler(MethodCall(message: message, arguments: message.arguments()))
            let declared = method.outputs.map(\.type)
            guard outputs.map(\.type) == declared else {
                throw DBusError(
                    name: .failed,
                    message: "\(candidate.name).\(member) produced '\(outputs.map(\.signature).joined())' "
                        + "instead of '\(declared.map(\.signatureText).joined())'")
            }
            return try message.makeReturn(outputs)
        }
        throw unknownMethod(message)
    }

    private func unknownMethod(_ message: Message) -> DBusError {
        DBusError(
            name: .unknownMethod,
            message: "No method \(message.member?.rawValue ?? "?") with signature '\(message.signature)' "
                + "in interface \(message.interface?.rawValue ?? "(any)") at \(message.path?.rawValue ?? "?")")
    }

    private func answerProperties(_ message: Message, object: ExportedObject) throws -> [Value] {
        let args = message.arguments()
        func lookup(_ interfaceName: String, _ propertyName: String) throws -> ExportedProperty {
            guard let name = InterfaceName(rawValue: interfaceName), let interface = object.interface(name) else {
                throw DBusError(name: .unknownInterface, message: "No interface \(interfaceName)")
            }
            guard let property = interface.properties.first(where: { $0.name == propertyName }) else {
                throw DBusError(name: .unknownProperty, message: "No property \(propertyName) in \(interfaceName)")
            }
            return property
        }
        switch (message.member?.rawValue, message.signature) {
        case ("Get", "ss"):
            let property = try lookup(args[0].stringValue ?? "", args[1].stringValue ?? "")
            return [.variant(try property.get())]
        case ("GetAll", "s"):
            let name = args[0].stringValue ?? ""
            guard let interfaceName = InterfaceName(rawValue: name), let interface = object.interface(interfaceName)
            else {
                throw DBusError(name: .unknownInterface, message: "No interface \(name)")
            }
            var entries: [(String, Value)] = []
            for property in interface.properties { entries.append((property.name, try property.get())) }
            return [.vardict(entries)]
        case ("Set", "ssv"):
            let property = try lookup(args[0].stringValue ?? "", args[1].stringValue ?? "")
            guard let set = property.set else {
                throw DBusError(name: .propertyReadOnly, message: "Property \(property.name) is read-only")
            }
            let value = args[2].unwrappingVariantOnce
            guard value.type == property.type else {
                throw DBusError(
                    name: .invalidArgs, message: "Property \(property.name) has type \(property.type), got \(value.type)")
            }
            try set(value)
            return []
        default:
            throw unknownMethod(message)
        }
    }

    // MARK: - Introspection

    func introspectionXML(path: ObjectPath, object: ExportedObject?) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        if let object {
            xml += Self.standardInterfacesXML
            for interface in object.interfaces {
                xml += "  <interface name=\"\(interface.name)\">\n"
                for method in interface.methods {
                    xml += "    <method name=\"\(method.name)\">\n"
                    for arg in method.inputs {
                        xml += "      <arg name=\"\(xmlEscaped(arg.name))\" type=\"\(arg.type)\" direction=\"in\"/>\n"
                    }
                    for arg in method.outputs {
                        xml += "      <arg name=\"\(xmlEscaped(arg.name))\" type=\"\(arg.type)\" direction=\"out\"/>\n"
                    }
                    xml += "    </method>\n"
                }
                for signal in interface.signals {
                    xml += "    <signal name=\"\(signal.name)\">\n"
                    for arg in signal.arguments {
                        xml += "      <arg name=\"\(xmlEscaped(arg.name))\" type=\"\(arg.type)\"/>\n"
                    }
                    xml += "    </signal>\n"
                }
                for property in interface.properties {
                    let access = property.set == nil ? "read" : "readwrite"
                    xml += "    <property name=\"\(xmlEscaped(property.name))\" type=\"\(property.type)\" access=\"\(access)\"/>\n"
                }
                xml += "  </interface>\n"
            }
        }
        // Direct children, so tools can walk the tree.
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var children: [String] = []
        for (key, _) in objects where key.rawValue.hasPrefix(prefix) {
            let rest = key.rawValue.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first, !children.contains(String(first)) {
                children.append(String(first))
            }
        }
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    static let standardInterfacesXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """
}

/// Text with XML's five special characters as entities (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`):
/// introspection data here, and the notification spec's body markup, which is XML's.
public func xmlEscaped(_ text: String) -> String {
    // By bytes: the five are ASCII, and no other character's UTF-8 holds an ASCII byte. (By
    // Character it was a tenth of a busy daemon's time, and "&" with a combining mark after it made
    // one character, not "&", left unescaped.) Text with none of them, most of it, is returned as is.
    let utf8 = text.utf8
    guard utf8.contains(where: xmlSpecial) else { return text }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count + 16)
    for byte in utf8 {
        switch byte {
        case UInt8(ascii: "&"): out += "&amp;".utf8
        case UInt8(ascii: "<"): out += "&lt;".utf8
        case UInt8(ascii: ">"): out += "&gt;".utf8
        case UInt8(ascii: "\""): out += "&quot;".utf8
        case UInt8(ascii: "'"): out += "&apos;".utf8
        default: out.append(byte)
        }
    }
    return String(decoding: out, as: UTF8.self)
}

private func xmlSpecial(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
    default: false
    }
}

extension Value {
    /// The value inside one variant (a property's `v`).
    var unwrappingVariantOnce: Value {
        if case .variant(let inner) = self { return inner }
        return self
    }
}
