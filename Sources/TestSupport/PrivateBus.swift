import DBus
import Foundation

/// A private session bus for one test: a test desktop (scripts/testdesktop.py) with just its bus.
public final class PrivateBus: @unchecked Sendable {
    public let desktop: TestDesktop
    /// The desktop's own directory (removed when it stops): tests keep their state and files there.
    public var directory: URL { desktop.directory }
    public let address: String

    /// Starts the bus. `serviceDirectory` enables D-Bus activation from it.
    public init(serviceDirectory: String? = nil) throws {
        desktop = try TestDesktop(.bus, serviceDirectory: serviceDirectory)
        guard let address = desktop.environment["DBUS_SESSION_BUS_ADDRESS"] else {
            desktop.stop()
            throw HarnessError("the test desktop has no bus")
        }
        self.address = address
    }

    /// The bus daemon's PID.
    public var pid: Int32 { desktop.pids["session-bus"] ?? 0 }

    /// The environment a client process needs to find this bus (and nothing of the real session).
    public func environment(extra: [String: String] = [:]) -> [String: String] {
        var environment = ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                           "HOME": directory.path, "LANG": "C.UTF-8"]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// A new connection to this bus.
    public func connect() throws -> Connection { try Connection(.address(address)) }

    /// Waits until `name` has an owner on this bus.
    public func waitForName(_ name: BusName, timeout: TimeInterval = 30) throws {
        let connection = try connect()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try connection.nameHasOwner(name) { return }
            usleep(10_000)
        }
        throw HarnessError("nobody took \(name) within \(timeout) s")
    }

    /// Stops the bus (and whatever else its desktop runs) by PID, and removes the directory.
    public func stop() { desktop.stop() }
}

/// The X display of a test desktop (Xvfb, without a screen).
public struct VirtualDisplay: Sendable {
    public let display: String
}

/// dunst under Xvfb on a private bus's desktop: the real, third-party notification server of the tests
/// (with few popups on screen, so it stays fast; the harness's dunstrc).
public final class Dunst: @unchecked Sendable {
    public let display: VirtualDisplay
    public let pid: Int32
    private let desktop: TestDesktop

    /// `config`: a dunstrc of the test's own (else the harness's).
    public init(bus: PrivateBus, config: String? = nil) throws {
        desktop = bus.desktop
        try desktop.command("start dunst" + (config.map { " " + $0 } ?? ""))
        display = VirtualDisplay(display: desktop.environment["DISPLAY"] ?? "")
        pid = desktop.pids["dunst"] ?? 0
    }

    /// Kills dunst the hard way, as a crash would.
    public func kill() { try? desktop.command("kill dunst") }

    /// Stops dunst (the display stays with the bus's desktop, until it stops).
    public func stop() { try? desktop.command("stop dunst") }
}
