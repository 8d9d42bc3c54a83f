import DBus
import Foundation

/// xdg-desktop-portal's notification interface, stood in for by python3-dbusmock with a template of
/// our own (`Tests/portal/notification_portal.py`) on a test's private bus: it records every
/// `AddNotification` and `RemoveNotification` exactly as they came (`calls`), and emits
/// `ActionInvoked` when told, as the portal does when a button is pressed.
public final class PortalStandIn: @unchecked Sendable {
    private let process: ChildProcess
    private let connection: Connection

    public static let busName: BusName = "org.freedesktop.portal.Desktop"
    static let path: ObjectPath = "/org/freedesktop/portal/desktop"

    /// Starts it on `bus`, saying `version` and `supportedOptions` (version 2's `SupportedOptions`).
    public init(bus: PrivateBus, version: UInt32 = 1, supportedOptions: [String: [String]] = [:]) throws {
        let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/portal/notification_portal.py").path
        let options = supportedOptions.map { key, values in "\"\(key)\": [\(values.map { "\"\($0)\"" }.joined(separator: ", "))]" }
        let parameters = "{\"version\": \(version), \"SupportedOptions\": {\(options.joined(separator: ", "))}}"
        process = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--session", "--template", template, "-p", parameters],
                                   environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"],
                                   logDirectory: bus.directory)
        do {
            try bus.waitForName(Self.busName)
            connection = try bus.connect()
        } catch {
            process.stop()
            throw error
        }
    }

    /// The arguments of each call of `method` so far, oldest first.
    public func calls(_ method: String) throws -> [[Value]] {
        let reply = try connection.call(
            destination: Self.busName, path: Self.path, interface: "org.freedesktop.DBus.Mock", member: "GetMethodCalls",
            arguments: [.string(method)])
        guard let calls = reply.first?.arrayElements else { throw HarnessError("GetMethodCalls replied \(reply)") }
        return calls.map { call in
            guard case .structure(let fields) = call, fields.count == 2, let arguments = fields[1].arrayElements else { return [] }
            return arguments.map(\.unwrappingVariants)
        }
    }

    /// The methods called so far on the portal, in order (`Get`, `AddNotification`, `RemoveNotification`).
    public func methodsCalled() throws -> [String] {
        let reply = try connection.call(
            destination: Self.busName, path: Self.path, interface: "org.freedesktop.DBus.Mock", member: "GetCalls")
        return (reply.first?.arrayElements ?? []).compactMap { call in
            guard case .structure(let fields) = call, fields.count == 3 else { return nil }
            return fields[1].stringValue
        }
    }

    /// Emits `ActionInvoked(id, action, [])` as the portal does.
    public func invoke(id: String, action: String) throws {
        _ = try connection.call(
            destination: Self.busName, path: Self.path, interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
            arguments: [.string("org.freedesktop.portal.Notification"), .string("ActionInvoked"), .string("ssav"),
                        .array(element: .variant, [.variant(.string(id)), .variant(.string(action)), .variant(.array(element: .variant, []))])])
    }

    /// Stops it, by PID.
    public func stop() { process.stop() }
}

/// The arguments that run a program inside a bubblewrap sandbox that looks like a Flatpak: a
/// `/.flatpak-info` naming `app`, every top-level directory of the machine read-only (and `/tmp`,
/// where the test's bus listens, writable), on a root of its own: nothing is created on the
/// machine's root (binding `/` itself would leave an empty `/.flatpak-info` behind, which every
/// program reading it would then see).
public func flatpakSandbox(app: String, in directory: URL) throws -> [String] {
    let info = directory.appendingPathComponent("flatpak-info").path
    try "[Application]\nname=\(app)\n".write(toFile: info, atomically: true, encoding: .utf8)
    var arguments = ["--proc", "/proc", "--dev-bind", "/dev", "/dev", "--bind", "/tmp", "/tmp"]
    for name in try FileManager.default.contentsOfDirectory(atPath: "/").sorted() where !["proc", "dev", "tmp", ".flatpak-info"].contains(name) {
        let path = "/" + name
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
            arguments += ["--symlink", target, path]
        } else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                arguments += ["--ro-bind", path, path]
            }
        }
    }
    return arguments + ["--ro-bind", info, "/.flatpak-info"]
}
