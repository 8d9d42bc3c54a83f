import DBus
import Foundation
import Synchronization

/// An object exported with our dbus layer, on its own thread and connection,
/// that sends back what it receives: the real bus between the two ends.
public final class EchoServer: @unchecked Sendable {
    public static let name: BusName = "org.chime.Test.Echo"
    public static let path: ObjectPath = "/org/chime/Test/Echo"
    public static let interface: InterfaceName = "org.chime.Test.Echo"

    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)
    private let ready = DispatchSemaphore(value: 0)
    private var startError: (any Error)?
    public let address: String
    private let lock = NSLock()
    private var _volume: Int32 = 5

    public init(address: String) throws {
        self.address = address
        let thread = Thread { [unowned self] in self.serve() }
        thread.start()
        ready.wait()
        if let startError { throw startError }
    }

    /// Stops the server (a second call does nothing).
    public func stop() {
        let already = stopped.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !already else { return }
        if let connection = try? Connection(.address(address)) {
            _ = try? connection.call(destination: Self.name, path: Self.path, interface: Self.interface, member: "Quit")
        }
        finished.wait()
    }

    private func serve() {
        defer { finished.signal() }
        do {
            let connection = try Connection(.address(address))
            var quit = false
            let object = ExportedObject(interfaces: [
                ExportedInterface(
                    Self.interface,
                    methods: [
                        ExportedMethod("Echo", inputs: [Parameter("value", .variant)], outputs: [Parameter("value", .variant)]) {
                            $0.arguments
                        },
                        ExportedMethod("Fail", inputs: [Parameter("message", .string)]) { call in
                            throw DBusError(name: "org.chime.Test.Error.Requested", message: call.arguments[0].stringValue ?? "")
                        },
                        ExportedMethod("Sleep", inputs: [Parameter("milliseconds", .uint32)]) { call in
                            usleep(UInt32(call.arguments[0].uint32Value ?? 0) * 1000)
                            return []
                        },
                        ExportedMethod("Ping", inputs: [Parameter("text", .string)]) { call in
                            try connection.emit(path: Self.path, interface: Self.interface, member: "Pong", arguments: call.arguments)
                            return []
                        },
                        ExportedMethod("Quit") { _ in
                            quit = true
                            return []
                        },
                    ],
                    signals: [ExportedSignal("Pong", arguments: [Parameter("text", .string)])],
                    properties: [
                        ExportedProperty("Name", type: .string, get: { .string("echo") }),
                        ExportedProperty(
                            "Volume", type: .int32,
                            get: { [unowned self] in .int32(self.lock.withLock { self._volume }) },
                            set: { [unowned self] value in
                                guard case .int32(let v) = value, (0...10).contains(v) else {
                                    throw DBusError(name: .invalidArgs, message: "Volume must be 0-10")
                                }
                                self.lock.withLock { self._volume = v }
                            }),
                    ]),
            ])
            connection.export(object, at: Self.path)
            guard try connection.requestName(Self.name) == .primaryOwner else {
                throw HarnessError("\(Self.name) is taken")
            }
            ready.signal()
            _ = connection.run { !quit }
            connection.flush()
            connection.close()
        } catch {
            startError = error
            ready.signal()
        }
    }
}
