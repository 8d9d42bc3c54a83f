import DBus
import Foundation

/// A private `dbus-daemon` for one test: its own config and socket in a temporary directory.
public final class PrivateBus: @unchecked Sendable {
    public let directory: URL
    public let address: String
    private let daemon: ChildProcess

    /// Starts the daemon. `serviceDirectory` enables D-Bus activation from it.
    public init(serviceDirectory: String? = nil) throws {
        directory = try makeTemporaryDirectory("chime-bus")
        let services = serviceDirectory.map { "<servicedir>\($0)</servicedir>" } ?? ""
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory.path)</listen>
              <auth>EXTERNAL</auth>
              \(services)
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let configURL = directory.appendingPathComponent("bus.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        daemon = try ChildProcess(
            "dbus-daemon", ["--config-file=\(configURL.path)", "--nofork", "--print-address=1", "--nopidfile"],
            logDirectory: directory)
        address = try daemon.readLine()
    }

    public var pid: Int32 { daemon.pid }

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
    public func waitForName(_ name: BusName, timeout: TimeInterval = 10) throws {
        let connection = try connect()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try connection.nameHasOwner(name) { return }
            usleep(10_000)
        }
        throw HarnessError("nobody took \(name) within \(timeout) s")
    }

    /// Stops the daemon by its PID and removes the directory.
    public func stop() {
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// An X server without a screen, for notification servers that need a display.
public final class VirtualDisplay: @unchecked Sendable {
    public let display: String
    private let server: ChildProcess

    public init(logDirectory: URL) throws {
        server = try ChildProcess(
            "Xvfb", ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"], logDirectory: logDirectory)
        display = ":" + (try server.readLine())
    }

    public func stop() { server.stop() }
}

/// dunst under Xvfb on a private bus: the real, third-party notification server of the tests.
public final class Dunst: @unchecked Sendable {
    public let display: VirtualDisplay
    private let dunst: ChildProcess
    public var pid: Int32 { dunst.pid }

    public init(bus: PrivateBus) throws {
        display = try VirtualDisplay(logDirectory: bus.directory)
        let config = bus.directory.appendingPathComponent("dunstrc")
        // Few popups on screen, so dunst stays fast; no scripts, no browser.
        try """
            [global]
                notification_limit = 5
                history_length = 20
                idle_threshold = 0
                show_indicators = no
                browser = /bin/true
                dmenu = /bin/true
                mouse_left_click = do_action, close_current
            [urgency_low]
                timeout = 10
            [urgency_normal]
                timeout = 10
            [urgency_critical]
                timeout = 0
            """.write(to: config, atomically: true, encoding: .utf8)
        do {
            dunst = try ChildProcess(
                "dunst", ["-config", config.path],
                environment: bus.environment(extra: ["DISPLAY": display.display]), logDirectory: bus.directory)
            try bus.waitForName("org.freedesktop.Notifications")
        } catch {
            display.stop()
            throw error
        }
    }

    /// Kills dunst the hard way, as a crash would.
    public func kill() { dunst.kill9() }

    public func stop() {
        dunst.stop()
        display.stop()
    }
}
