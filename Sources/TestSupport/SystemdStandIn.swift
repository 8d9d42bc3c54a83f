import DBus
import Foundation

/// A stand-in for systemd's user manager (`org.freedesktop.systemd1` on a session bus), since no
/// user manager runs here: it says its `Version`, and records `StartTransientUnit` and `StopUnit`
/// calls as they arrived, keeping the units started and not stopped for `ListUnitsByPatterns`.
public final class SystemdStandIn: @unchecked Sendable {
    /// One `StartTransientUnit`: the unit's name, mode, properties and auxiliary units, unwrapped.
    public struct TransientUnit: Sendable {
        public var name: String
        public var mode: String
        public var properties: [String: Value]
        public var auxiliary: [(name: String, properties: [String: Value])]
    }

    private let lock = NSLock()
    private var _started: [TransientUnit] = []
    private var _stopped: [String] = []
    private var quit = false
    private let finished = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private var startError: (any Error)?
    public let address: String
    public let version: String

    public var started: [TransientUnit] { lock.withLock { _started } }
    public var stopped: [String] { lock.withLock { _stopped } }
    private var _hangs = false
    private var _unanswered: [String] = []
    /// A manager whose job engine is stuck: it says its Version, and never answers StartTransientUnit,
    /// StopUnit or ListUnitsByPatterns (each is recorded in `unanswered`).
    public var hangs: Bool {
        get { lock.withLock { _hangs } }
        set { lock.withLock { _hangs = newValue } }
    }
    /// The calls it left unanswered, by member name.
    public var unanswered: [String] { lock.withLock { _unanswered } }

    /// Leaves `call` unanswered when the manager hangs.
    private func hangIfAsked(_ member: String) throws {
        if lock.withLock({ () -> Bool in
            if _hangs { _unanswered.append(member) }
            return _hangs
        }) { throw ReplyLater() }
    }

    public init(address: String, version: String) throws {
        self.address = address
        self.version = version
        let thread = Thread { [unowned self] in self.serve() }
        thread.name = "systemd-stand-in"
        thread.start()
        ready.wait()
        if let startError { throw startError }
    }

    /// Waits until `condition` holds of what was recorded.
    public func wait(_ timeout: TimeInterval = 10, until condition: (SystemdStandIn) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(self) { return true }
            usleep(10_000)
        }
        return condition(self)
    }

    public func stop() {
        guard lock.withLock({ () -> Bool in defer { quit = true }; return !quit }) else { return }
        // Wakes the loop: any call will do.
        if let connection = try? Connection(.address(address)) {
            _ = try? connection.call(destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
                                     interface: "org.freedesktop.DBus.Peer", member: "Ping")
        }
        finished.wait()
    }

    static func dictionary(_ value: Value) -> [String: Value] {
        var result: [String: Value] = [:]
        for element in value.arrayElements ?? [] {
            if case .structure(let pair) = element, pair.count == 2, let key = pair[0].stringValue { result[key] = pair[1].unwrappingVariants }
        }
        return result
    }

    private func serve() {
        defer { finished.signal() }
        let connection: Connection
        do { connection = try Connection(.address(address)) } catch {
            startError = error
            ready.signal()
            return
        }
        let manager = ExportedInterface(
            "org.freedesktop.systemd1.Manager",
            methods: [
                ExportedMethod("StartTransientUnit", inputs: [
                    Parameter("name", .string), Parameter("mode", .string),
                    Parameter("properties", .array(.structure([.string, .variant]))),
                    Parameter("aux", .array(.structure([.string, .array(.structure([.string, .variant]))]))),
                ], outputs: [Parameter("job", .objectPath)]) { [unowned self] call in
                    try self.hangIfAsked("StartTransientUnit")
                    let a = call.arguments
                    let name = a[0].stringValue ?? ""
                    if self.lock.withLock({ self._started.contains { $0.name == name } && !self._stopped.contains(name) }) {
                        throw DBusError(name: "org.freedesktop.systemd1.UnitExists", message: "Unit \(name) was already loaded or has a fragment file.")
                    }
                    let aux: [(String, [String: Value])] = (a[3].arrayElements ?? []).compactMap { element in
                        guard case .structure(let pair) = element, let auxName = pair.first?.stringValue else { return nil }
                        return (auxName, Self.dictionary(pair[1]))
                    }
                    let unit = TransientUnit(name: name, mode: a[1].stringValue ?? "", properties: Self.dictionary(a[2]),
                                             auxiliary: aux.map { (name: $0.0, properties: $0.1) })
                    self.lock.withLock {
                        self._started.append(unit)
                        self._stopped.removeAll { $0 == name }
                    }
                    return [.objectPath("/org/freedesktop/systemd1/job/1")]
                },
                ExportedMethod("StopUnit", inputs: [Parameter("name", .string), Parameter("mode", .string)],
                               outputs: [Parameter("job", .objectPath)]) { [unowned self] call in
                    try self.hangIfAsked("StopUnit")
                    let name = call.arguments[0].stringValue ?? ""
                    self.lock.withLock { self._stopped.append(name) }
                    return [.objectPath("/org/freedesktop/systemd1/job/2")]
                },
                ExportedMethod("ListUnitsByPatterns", inputs: [Parameter("states", .array(.string)), Parameter("patterns", .array(.string))],
                               outputs: [Parameter("units", .array(.structure([.string, .string, .string, .string, .string, .string,
                                                                              .objectPath, .uint32, .string, .objectPath])))]) { [unowned self] _ in
                    try self.hangIfAsked("ListUnitsByPatterns")
                    let live = self.lock.withLock { self._started.map(\.name).filter { !self._stopped.contains($0) } }
                    return [.array(element: .structure([.string, .string, .string, .string, .string, .string, .objectPath, .uint32, .string, .objectPath]),
                                   live.map { name in
                                       .structure([.string(name), .string(""), .string("loaded"), .string("active"), .string("waiting"),
                                                   .string(""), .objectPath("/org/freedesktop/systemd1/unit/x"), .uint32(0), .string(""),
                                                   .objectPath("/")])
                                   })]
                },
            ],
            properties: [ExportedProperty("Version", type: .string, get: { [version] in .string(version) })])
        connection.export(ExportedObject(interfaces: [manager]), at: "/org/freedesktop/systemd1")
        do {
            guard try connection.requestName("org.freedesktop.systemd1") == .primaryOwner else {
                throw HarnessError("org.freedesktop.systemd1 is already owned on this bus")
            }
        } catch {
            startError = error
            ready.signal()
            return
        }
        ready.signal()
        _ = connection.run { [unowned self] in !self.lock.withLock { self.quit } }
        connection.close()
    }
}
