internal import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// Which bus to connect to.
public enum Bus: Sendable, Hashable {
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, or else the
    /// `$XDG_RUNTIME_DIR/bus` (or `/run/user/$UID/bus`) socket that systemd and
    /// dbus-user-session provide, which is what cron jobs, ssh sessions and
    /// systemd units without the variable need.
    case session
    /// The system bus.
    case system
    /// A bus at an explicit address such as `unix:path=/run/user/1000/bus`.
    case address(String)
}

/// How long a method call may wait for its reply.
public enum CallTimeout: Sendable, Hashable {
    /// libdbus's default (25 seconds).
    case `default`
    /// Wait for ever.
    case infinite
    /// Wait at most this many milliseconds.
    case milliseconds(Int32)

    var cValue: Int32 {
        switch self {
        case .default: CDBUS_TIMEOUT_USE_DEFAULT
        case .infinite: CDBUS_TIMEOUT_INFINITE
        case .milliseconds(let ms): max(0, ms)
        }
    }
}

/// A private connection to a message bus.
///
/// It owns its `DBusConnection` (opened with `dbus_connection_open_private`,
/// exit-on-disconnect off) and must be used from one thread.
///
/// ```swift
/// let bus = try Connection(.session)
/// let reply = try bus.call(destination: "org.freedesktop.Notifications",
///                          path: "/org/freedesktop/Notifications",
///                          interface: "org.freedesktop.Notifications",
///                          member: "GetCapabilities")
/// ```
public final class Connection {
    let raw: OpaquePointer
    /// The unique name the bus gave this connection, e.g. `:1.42`.
    public let uniqueName: String

    // Plain arrays, not dictionaries: a dictionary's metadata costs a scan of every
    // protocol conformance in the binary at start-up, and there are only a few of each.
    var subscriptions: [(id: Int, subscription: Subscription)] = []
    var nextSubscriptionID = 0
    var objects: [(path: ObjectPath, object: ExportedObject)] = []
    /// Well-known names whose signals subscriptions wait for, with each one's owner now.
    var followedOwners: [(name: BusName, owner: String?)] = []
    /// Told of each method call this connection answered and how long its handler took, in
    /// nanoseconds (a daemon's tracing of what holds its loop).
    public var methodCallObserver: ((Message, Int64) -> Void)?
    private var filterInstalled = false

    // MARK: - Connecting

    /// Connects and registers with `bus`.
    /// The corresponding C functions are `dbus_connection_open_private` and `dbus_bus_register`.
    public init(_ bus: Bus = .session) throws {
        let opened: OpaquePointer?
        switch bus {
        case .system:
            opened = try DBusError.check { dbus_bus_get_private(DBUS_BUS_SYSTEM, $0) }
        case .session:
            let address = try Connection.sessionBusAddress()
            opened = try Connection.open(address)
        case .address(let address):
            opened = try Connection.open(address)
        }
        guard let opened else { throw DBusError(name: .noServer, message: "could not connect to the bus") }
        dbus_connection_set_exit_on_disconnect(opened, 0)
        if case .system = bus {} else {
            do {
                _ = try DBusError.check { dbus_bus_register(opened, $0) }
            } catch {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw error
            }
        }
        raw = opened
        uniqueName = dbus_bus_get_unique_name(opened).map { String(cString: $0) } ?? ""
    }

    private static func open(_ address: String) throws -> OpaquePointer? {
        if address.utf8.contains(0) {
            throw DBusError(name: .badAddress, message: "the bus address contains a NUL byte")
        }
        return try DBusError.check { dbus_connection_open_private(address, $0) }
    }

    deinit {
        close()
        dbus_connection_unref(raw)
    }

    /// Closes the connection: the bus drops its names and match rules. Exported
    /// objects and subscriptions are released too, which breaks the reference
    /// cycles of handlers that capture this connection.
    /// The corresponding C function is `dbus_connection_close`.
    public func close() {
        if filterInstalled {
            dbus_connection_remove_filter(raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque())
            filterInstalled = false
        }
        objects.removeAll()
        subscriptions.removeAll()
        dbus_connection_close(raw)
    }

    /// The session bus address this process would use, following the same
    /// search as `Bus.session`.
    public static func sessionBusAddress() throws(DBusError) -> String {
        if let value = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !value.isEmpty {
            return value
        }
        var candidates: [String] = []
        if let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty {
            candidates.append(runtime + "/bus")
        }
        candidates.append("/run/user/\(getuid())/bus")
        for path in candidates where isSocket(path) {
            return "unix:path=" + escapeAddressValue(path)
        }
        throw DBusError(
            name: .noServer,
            message: "DBUS_SESSION_BUS_ADDRESS is not set and there is no session bus socket at "
                + candidates.joined(separator: " or "))
    }

    private static func isSocket(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Escapes a value for a D-Bus address (`%XX` for bytes outside `[-0-9A-Za-z_/.\*]`).
    static func escapeAddressValue(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"),
                UInt8(ascii: "*"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789abcdef".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 15)]))
            }
        }
        return out
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { dbus_connection_get_is_connected(raw) != 0 }

    /// The socket, for a poll loop. The corresponding C function is `dbus_connection_get_unix_fd`.
    public var fileDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(raw, &fd) != 0 ? fd : nil
    }

    // MARK: - Sending

    /// Queues `message` and returns its serial. The corresponding C function is `dbus_connection_send`.
    @discardableResult
    public func send(_ message: Message) throws -> UInt32 {
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else { throw DBusError.outOfMemory }
        return serial
    }

    /// Writes everything queued to the socket. The corresponding C function is `dbus_connection_flush`.
    public func flush() { dbus_connection_flush(raw) }

    /// Sends a method call and blocks until its reply, an error reply or the timeout.
    /// Remote errors are thrown as `DBusError` with their name and message and the call.
    /// The corresponding C function is `dbus_connection_send_with_reply_and_block`.
    public func call(_ message: Message, timeout: CallTimeout = .default) throws -> Message {
        let reply = try DBusError.check(call: message.callDescription) {
            dbus_connection_send_with_reply_and_block(raw, message.raw, timeout.cValue, $0)
        }
        guard let reply else {
            throw DBusError(name: .noReply, message: "no reply", call: message.callDescription)
        }
        return Message(owning: reply)
    }

    /// Calls a method and returns the reply's arguments.
    public func call(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [Value] = [], timeout: CallTimeout = .default
    ) throws -> [Value] {
        let message = try Message.methodCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        return try call(message, timeout: timeout).arguments()
    }

    /// Sends a method call without waiting: the reply arrives through the
    /// returned `PendingCall` while the connection is dispatched.
    /// The corresponding C function is `dbus_connection_send_with_reply`.
    public func send(_ message: Message, timeout: CallTimeout) throws -> PendingCall {
        var pending: OpaquePointer? = nil
        guard dbus_connection_send_with_reply(raw, message.raw, &pending, timeout.cValue) != 0 else {
            throw DBusError.outOfMemory
        }
        guard let pending else {
            throw DBusError(name: .disconnected, message: "the connection is closed", call: message.callDescription)
        }
        return PendingCall(owning: pending, request: message)
    }

    // MARK: - Receiving

    /// Reads from and writes to the socket, waiting at most `timeout` milliseconds
    /// (`-1`: no limit), then dispatches one message. Returns false once disconnected.
    /// The corresponding C function is `dbus_connection_read_write_dispatch`.
    @discardableResult
    public func readWriteDispatch(timeout milliseconds: Int32) -> Bool {
        installFilter()
        return dbus_connection_read_write_dispatch(raw, milliseconds) != 0
    }

    /// Dispatches every message already read, without blocking.
    public func dispatchPending() {
        installFilter()
        while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    /// Reads what the socket has without blocking, and writes what is queued.
    func readWriteNonBlocking() -> Bool { dbus_connection_read_write(raw, 0) != 0 }

    /// Whether messages are queued to be written.
    public var hasMessagesToSend: Bool { dbus_connection_has_messages_to_send(raw) != 0 }

    /// Whether messages wait in the connection's queue (read during a blocking call, say): a poll
    /// on the socket would not see them.
    public var hasMessagesToDispatch: Bool { dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS }

    /// For a caller's own poll loop: reads and writes what the socket allows
    /// without blocking, then dispatches every complete message. False once disconnected.
    @discardableResult
    public func processAvailable() -> Bool {
        installFilter()
        let connected = readWriteNonBlocking()
        dispatchPending()
        return connected && isConnected
    }

    /// Why `run(until:wakeOn:while:)` returned.
    public enum RunResult: Sendable, Equatable {
        /// The condition became false.
        case finished
        /// The deadline passed.
        case timedOut
        /// `wakeOn` became readable.
        case woken
        /// The bus connection closed.
        case disconnected
    }

    /// Dispatches incoming messages while `condition()` holds, until the
    /// deadline passes, the connection closes, or `wakeOn` (a signalfd, say)
    /// becomes readable. Sleeps in `poll` between messages: no periodic wake-ups.
    public func run(
        until deadline: Deadline? = nil, wakeOn extraFD: Int32? = nil,
        while condition: () -> Bool
    ) -> RunResult {
        installFilter()
        while true {
            dispatchPending()
            if !condition() { return .finished }
            if !isConnected { return .disconnected }
            var timeout: Int32 = -1
            if let deadline {
                let left = Deadline.now.duration(to: deadline)
                if left <= .zero { return .timedOut }
                let (seconds, attoseconds) = left.components
                let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
                timeout = Int32(clamping: ms)
            }
            guard let busFD = fileDescriptor else { return .disconnected }
            var fds = [pollfd(fd: busFD, events: Int16(POLLIN) | (hasMessagesToSend ? Int16(POLLOUT) : 0), revents: 0)]
            if let extraFD { fds.append(pollfd(fd: extraFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return .disconnected
            }
            if fds.count > 1, fds[1].revents != 0 { return .woken }
            if ready == 0 { continue }  // the deadline check above decides
            if !readWriteNonBlocking() { return .disconnected }
        }
    }

    // MARK: - The message filter

    func installFilter() {
        if filterInstalled || !isConnected { return }
        filterInstalled = true
        dbus_connection_add_filter(raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    func handle(_ message: Message) -> Bool {
        switch message.kind {
        case .signal:
            deliverSignal(message)
            return false  // other filters may want it too
        case .methodCall:
            guard let observer = methodCallObserver else { return dispatchMethodCall(message) }
            var start = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            let handled = dispatchMethodCall(message)
            var end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &end)
            observer(message, (Int64(end.tv_sec) - Int64(start.tv_sec)) * 1_000_000_000 + Int64(end.tv_nsec) - Int64(start.tv_nsec))
            return handled
        default:
            return false
        }
    }
}

/// The one C callback through which every incoming message reaches Swift.
private func connectionFilter(
    _ connection: OpaquePointer?, _ message: OpaquePointer?, _ context: UnsafeMutableRawPointer?
) -> DBusHandlerResult {
    guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let owner = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
    dbus_message_ref(message)
    let handled = owner.handle(Message(owning: message))
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

extension ErrorName {
    public static let badAddress: ErrorName = "org.freedesktop.DBus.Error.BadAddress"
}

// MARK: - Pending calls

/// A method call sent without blocking; its reply is collected later.
///
/// The corresponding C type is `DBusPendingCall`.
public final class PendingCall {
    let raw: OpaquePointer
    /// The request, kept to describe the call if it fails.
    private let request: Message

    init(owning raw: OpaquePointer, request: Message) {
        self.raw = raw
        self.request = request
    }

    /// The call this is waiting on.
    public var call: CallDescription { request.callDescription }

    deinit { dbus_pending_call_unref(raw) }

    /// Whether the reply (or an error, or the timeout) has arrived.
    public var isCompleted: Bool { dbus_pending_call_get_completed(raw) != 0 }

    /// Stops waiting; a later reply is dropped.
    public func cancel() { dbus_pending_call_cancel(raw) }

    /// Blocks until the reply has arrived and returns it; error replies are thrown.
    public func wait() throws -> Message {
        dbus_pending_call_block(raw)
        return try takeReply()
    }

    /// The reply of a completed call; error replies are thrown as `DBusError`.
    public func takeReply() throws -> Message {
        try PendingCall.reply(of: raw, request: request)
    }

    /// Runs `handler` when the call completes, from inside the connection's dispatch.
    /// The corresponding C function is `dbus_pending_call_set_notify`.
    public func onCompletion(_ handler: @escaping (Result<Message, any Error>) -> Void) throws {
        let box = Unmanaged.passRetained(CompletionBox(request: request, body: handler))
        let ok = dbus_pending_call_set_notify(
            raw,
            { pending, context in
                guard let pending, let context else { return }
                let box = Unmanaged<CompletionBox>.fromOpaque(context).takeUnretainedValue()
                box.body(Result { try PendingCall.reply(of: pending, request: box.request) })
            },
            box.toOpaque(),
            { context in
                guard let context else { return }
                Unmanaged<CompletionBox>.fromOpaque(context).release()
            })
        if ok == 0 {
            box.release()
            throw DBusError.outOfMemory
        }
    }

    static func reply(of pending: OpaquePointer, request: Message) throws -> Message {
        guard let reply = dbus_pending_call_steal_reply(pending) else {
            throw DBusError(name: .noReply, message: "the call has no reply yet", call: request.callDescription)
        }
        let message = Message(owning: reply)
        if message.kind == .error {
            let text = message.arguments().first?.stringValue ?? ""
            throw DBusError(name: message.errorName ?? .failed, message: text, call: request.callDescription)
        }
        return message
    }
}

final class CompletionBox {
    let request: Message
    let body: (Result<Message, any Error>) -> Void
    init(request: Message, body: @escaping (Result<Message, any Error>) -> Void) {
        self.request = request
        self.body = body
    }
}
