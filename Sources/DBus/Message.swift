internal import CDBus

/// A D-Bus message: a method call, a reply, an error or a signal.
///
/// It owns its `DBusMessage` (the corresponding C type) and, like every libdbus
/// object, belongs to one thread at a time.
public final class Message {
    let raw: OpaquePointer

    /// Takes ownership of one reference to `raw`.
    init(owning raw: OpaquePointer) { self.raw = raw }

    deinit { dbus_message_unref(raw) }

    /// The four kinds of message.
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal, unknown
    }

    // MARK: - Making messages

    /// A method call; `arguments` are validated before libdbus sees them.
    /// The corresponding C function is `dbus_message_new_method_call`.
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [Value] = []
    ) throws -> Message {
        guard
            let raw = dbus_message_new_method_call(
                destination?.rawValue, path.rawValue, interface?.rawValue, member.rawValue)
        else { throw DBusError.outOfMemory }
        let message = Message(owning: raw)
        try message.append(arguments)
        return message
    }

    /// A signal; with a `destination`, sent to that connection alone (a unicast signal).
    /// The corresponding C functions are `dbus_message_new_signal` and `dbus_message_set_destination`.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [Value] = [], destination: BusName? = nil
    ) throws -> Message {
        guard let raw = dbus_message_new_signal(path.rawValue, interface.rawValue, member.rawValue) else {
            throw DBusError.outOfMemory
        }
        let message = Message(owning: raw)
        if let destination, dbus_message_set_destination(raw, destination.rawValue) == 0 { throw DBusError.outOfMemory }
        try message.append(arguments)
        return message
    }

    /// The successful reply to this method call.
    public func makeReturn(_ arguments: [Value] = []) throws -> Message {
        guard let reply = dbus_message_new_method_return(raw) else { throw DBusError.outOfMemory }
        let message = Message(owning: reply)
        try message.append(arguments)
        return message
    }

    /// An error reply to this method call. NUL bytes in `text` are replaced,
    /// since libdbus cannot carry them.
    public func makeError(name: ErrorName, message text: String) throws -> Message {
        let safe = text.utf8.contains(0) ? String(text.map { $0 == "\0" ? "\u{FFFD}" : $0 }) : text
        guard let reply = dbus_message_new_error(raw, name.rawValue, safe) else { throw DBusError.outOfMemory }
        return Message(owning: reply)
    }

    // MARK: - Header fields

    public var kind: Kind {
        switch Int32(dbus_message_get_type(raw)) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: .signal
        default: .unknown
        }
    }

    /// The object path (calls and signals).
    public var path: ObjectPath? {
        dbus_message_get_path(raw).map { ObjectPath(trusted: String(cString: $0)) }
    }
    /// The interface (calls and signals).
    public var interface: InterfaceName? {
        dbus_message_get_interface(raw).map { InterfaceName(trusted: String(cString: $0)) }
    }
    /// The method or signal name.
    public var member: MemberName? {
        dbus_message_get_member(raw).map { MemberName(trusted: String(cString: $0)) }
    }
    /// The error name of an error reply.
    public var errorName: ErrorName? {
        dbus_message_get_error_name(raw).map { ErrorName(trusted: String(cString: $0)) }
    }
    /// The unique name of the sending connection.
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    /// The destination bus name.
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    /// The body's signature text.
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    /// The serial the sender gave this message.
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    /// For replies, the serial of the call they answer.
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }

    /// Whether the caller asked for no reply.
    public var noReplyExpected: Bool {
        get { dbus_message_get_no_reply(raw) != 0 }
        set { dbus_message_set_no_reply(raw, newValue ? 1 : 0) }
    }

    /// Whether the bus may start the destination's service to deliver this call.
    public var autoStart: Bool {
        get { dbus_message_get_auto_start(raw) != 0 }
        set { dbus_message_set_auto_start(raw, newValue ? 1 : 0) }
    }

    /// A description of this message as a call, for error reports (built only when one is needed).
    public var callDescription: CallDescription {
        CallDescription(
            destination: destination, path: path?.rawValue ?? "/", interface: interface?.rawValue,
            member: member?.rawValue ?? "?")
    }

    // MARK: - Body

    /// Appends `values` to the body after validating every one of them.
    public func append(_ values: [Value]) throws {
        if values.isEmpty { return }
        var types: [DBusType] = []
        types.reserveCapacity(values.count)
        var length = 0
        for (index, value) in values.enumerated() {
            try value.validateArgument(index)
            let type = value.type
            types.append(type)
            length += type.signatureLength
        }
        let existing = signature
        if length + existing.utf8.count > Signature.maximumLength {
            throw InvalidValueError(location: "message body", reason: "its signature would be longer than 255 bytes")
        }
        do {
            for type in types { try Signature.checkNesting(type, text: existing) }
        } catch {
            throw InvalidValueError(location: "message body", reason: error.reason)
        }
        var iter = cdbus_iter_zero()
        dbus_message_iter_init_append(raw, &iter)
        for value in values { try Self.write(value, into: &iter) }
    }

    /// Appends one array whose elements `produce` hands over one at a time, so a listing of
    /// 100,000 rows is written without holding 100,000 values: each element is validated and
    /// written as it comes. An element of another type than `element` is an error.
    public func appendArray(of element: DBusType, _ produce: (_ add: (Value) throws -> Void) throws -> Void) throws {
        let type = DBusType.array(element)
        let existing = signature
        if type.signatureLength + existing.utf8.count > Signature.maximumLength {
            throw InvalidValueError(location: "message body", reason: "its signature would be longer than 255 bytes")
        }
        do {
            try Signature.checkNesting(type, text: existing)
        } catch {
            throw InvalidValueError(location: "message body", reason: error.reason)
        }
        var iter = cdbus_iter_zero()
        dbus_message_iter_init_append(raw, &iter)
        var index = 0
        try Self.container(&iter, CDBUS_TYPE_ARRAY, element.signatureText) { sub in
            try produce { value in
                guard value.type == element else {
                    throw InvalidValueError(location: "element \(index)", reason: "has type \(value.type) but the array holds \(element)")
                }
                try value.validate(at: "element \(index)")
                try Self.write(value, into: sub)
                index += 1
            }
        }
    }

    /// The body, decoded. libdbus has validated every received message, so this
    /// only fails on a message we built wrongly.
    public func arguments() -> [Value] {
        guard let types = try? Signature(validating: signature).types, !types.isEmpty else { return [] }
        var iter = cdbus_iter_zero()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        var values: [Value] = []
        values.reserveCapacity(types.count)
        for type in types {
            values.append(Self.read(&iter, as: type))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    // MARK: - Writing through DBusMessageIter

    private static func appendBasic<T: BitwiseCopyable>(_ iter: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ value: T) throws {
        var copy = value
        guard dbus_message_iter_append_basic(iter, code, &copy) != 0 else { throw DBusError.outOfMemory }
    }

    private static func appendString(_ iter: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ text: String) throws {
        let ok = text.withCString { pointer -> Bool in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(iter, code, &p) != 0
        }
        guard ok else { throw DBusError.outOfMemory }
    }

    private static func container(
        _ iter: UnsafeMutablePointer<DBusMessageIter>, _ code: Int32, _ signature: String?,
        _ body: (UnsafeMutablePointer<DBusMessageIter>) throws -> Void
    ) throws {
        var sub = cdbus_iter_zero()
        guard dbus_message_iter_open_container(iter, code, signature, &sub) != 0 else { throw DBusError.outOfMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(iter, &sub) != 0 else { throw DBusError.outOfMemory }
    }

    static func write(_ value: Value, into iter: UnsafeMutablePointer<DBusMessageIter>) throws {
        switch value {
        case .byte(let v): try appendBasic(iter, CDBUS_TYPE_BYTE, v)
        case .boolean(let v): try appendBasic(iter, CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try appendBasic(iter, CDBUS_TYPE_INT16, v)
        case .uint16(let v): try appendBasic(iter, CDBUS_TYPE_UINT16, v)
        case .int32(let v): try appendBasic(iter, CDBUS_TYPE_INT32, v)
        case .uint32(let v): try appendBasic(iter, CDBUS_TYPE_UINT32, v)
        case .int64(let v): try appendBasic(iter, CDBUS_TYPE_INT64, v)
        case .uint64(let v): try appendBasic(iter, CDBUS_TYPE_UINT64, v)
        case .double(let v): try appendBasic(iter, CDBUS_TYPE_DOUBLE, v)
        case .unixFD(let v): try appendBasic(iter, CDBUS_TYPE_UNIX_FD, v)
        case .string(let v): try appendString(iter, CDBUS_TYPE_STRING, v)
        case .objectPath(let v): try appendString(iter, CDBUS_TYPE_OBJECT_PATH, v.rawValue)
        case .signature(let v): try appendString(iter, CDBUS_TYPE_SIGNATURE, v.rawValue)
        case .variant(let inner):
            try container(iter, CDBUS_TYPE_VARIANT, inner.signature) { try write(inner, into: $0) }
        case .array(let element, let items):
            try container(iter, CDBUS_TYPE_ARRAY, element.signatureText) { sub in
                if element == .byte {
                    // Bytes (image data) go in as one block rather than one call each.
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(items.count)
                    for case .byte(let b) in items { bytes.append(b) }
                    let ok = bytes.withUnsafeBufferPointer { buffer -> Bool in
                        var base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                        return withUnsafeMutablePointer(to: &base) {
                            dbus_message_iter_append_fixed_array(sub, CDBUS_TYPE_BYTE, $0, Int32(buffer.count)) != 0
                        }
                    }
                    if !ok { throw DBusError.outOfMemory }
                } else {
                    for item in items { try write(item, into: sub) }
                }
            }
        case .dictionary(let key, let valueType, let entries):
            let entryType = DBusType.dictionaryEntry(key: key, value: valueType)
            try container(iter, CDBUS_TYPE_ARRAY, entryType.signatureText) { sub in
                for entry in entries {
                    try container(sub, CDBUS_TYPE_DICT_ENTRY, nil) { pair in
                        try write(entry.key, into: pair)
                        try write(entry.value, into: pair)
                    }
                }
            }
        case .structure(let fields):
            try container(iter, CDBUS_TYPE_STRUCT, nil) { sub in
                for field in fields { try write(field, into: sub) }
            }
        }
    }

    // MARK: - Reading through DBusMessageIter

    private static func readBasic<T: BitwiseCopyable>(_ iter: UnsafeMutablePointer<DBusMessageIter>, _ zero: T) -> T {
        var value = zero
        dbus_message_iter_get_basic(iter, &value)
        return value
    }

    private static func readString(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// Reads the value at `iter`, whose type the message signature says is `type`.
    static func read(_ iter: UnsafeMutablePointer<DBusMessageIter>, as type: DBusType) -> Value {
        switch type {
        case .byte: return .byte(readBasic(iter, UInt8(0)))
        case .boolean: return .boolean(readBasic(iter, dbus_bool_t(0)) != 0)
        case .int16: return .int16(readBasic(iter, Int16(0)))
        case .uint16: return .uint16(readBasic(iter, UInt16(0)))
        case .int32: return .int32(readBasic(iter, Int32(0)))
        case .uint32: return .uint32(readBasic(iter, UInt32(0)))
        case .int64: return .int64(readBasic(iter, Int64(0)))
        case .uint64: return .uint64(readBasic(iter, UInt64(0)))
        case .double: return .double(readBasic(iter, Double(0)))
        case .unixFD: return .unixFD(readBasic(iter, Int32(-1)))
        case .string: return .string(readString(iter))
        case .objectPath: return .objectPath(ObjectPath(trusted: readString(iter)))
        case .signature: return .signature(Signature(trusted: readString(iter)))
        case .variant:
            var sub = cdbus_iter_zero()
            dbus_message_iter_recurse(iter, &sub)
            guard let raw = dbus_message_iter_get_signature(&sub) else { return .variant(.structure([])) }
            let text = String(cString: raw)
            dbus_free(raw)
            let inner = Signature(trusted: text).types.first ?? .byte
            return .variant(read(&sub, as: inner))
        case .array(let element):
            var sub = cdbus_iter_zero()
            dbus_message_iter_recurse(iter, &sub)
            if element == .byte {
                var base: UnsafeMutableRawPointer? = nil
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &base, &count)
                var items: [Value] = []
                items.reserveCapacity(Int(count))
                if let bytes = base?.assumingMemoryBound(to: UInt8.self) {
                    for i in 0..<Int(count) { items.append(.byte(bytes[i])) }
                }
                return .array(element: .byte, items)
            }
            if case .dictionaryEntry(let key, let value) = element {
                var entries: [Value.DictionaryEntry] = []
                while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                    var pair = cdbus_iter_zero()
                    dbus_message_iter_recurse(&sub, &pair)
                    let k = read(&pair, as: key)
                    dbus_message_iter_next(&pair)
                    let v = read(&pair, as: value)
                    entries.append(.init(key: k, value: v))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            var items: [Value] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                items.append(read(&sub, as: element))
                dbus_message_iter_next(&sub)
            }
            return .array(element: element, items)
        case .structure(let fields):
            var sub = cdbus_iter_zero()
            dbus_message_iter_recurse(iter, &sub)
            var values: [Value] = []
            values.reserveCapacity(fields.count)
            for field in fields {
                values.append(read(&sub, as: field))
                dbus_message_iter_next(&sub)
            }
            return .structure(values)
        case .dictionaryEntry(let key, let value):
            // Only reachable inside an array, handled above; read defensively.
            var pair = cdbus_iter_zero()
            dbus_message_iter_recurse(iter, &pair)
            let k = read(&pair, as: key)
            dbus_message_iter_next(&pair)
            return .structure([k, read(&pair, as: value)])
        }
    }
}

// MARK: - Names libdbus has already validated

extension ObjectPath {
    /// A path libdbus has validated (from a received message).
    init(trusted text: String) { self = ObjectPath(rawValue: text) ?? .root }
}

extension InterfaceName {
    init(trusted text: String) { self = InterfaceName(rawValue: text) ?? .dbus }
}

extension MemberName {
    init(trusted text: String) { self = MemberName(rawValue: text) ?? "Invalid" }
}

extension ErrorName {
    init(trusted text: String) { self = ErrorName(rawValue: text) ?? .failed }
}

extension Signature {
    init(trusted text: String) { self = (try? Signature(validating: text)) ?? .empty }
}
