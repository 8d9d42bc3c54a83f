import Foundation

/// logind cannot run here: python3-dbusmock's logind template stands in for it, on a private bus the
/// daemon is given as its system bus (`environment`: `DBUS_SYSTEM_BUS_ADDRESS`, which libdbus reads).
/// It takes inhibitor locks (`inhibitors`) and emits `PrepareForSleep` when told (`prepareForSleep`).
///
/// hostnamed may stand beside it (`hostnamed(chassis:)`): python3-dbusmock serving
/// `org.freedesktop.hostname1` with the one property chime reads, `Chassis`.
public final class LogindStandIn: @unchecked Sendable {
    public let system: PrivateBus
    private let logind: ChildProcess
    private var hostnamed: ChildProcess?

    public init() throws {
        system = try PrivateBus()
        do {
            logind = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                                      environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address, "PATH": "/usr/bin:/bin"],
                                      logDirectory: system.directory)
        } catch {
            system.stop()
            throw error
        }
        if waitUntil(30, { (try? call("org.freedesktop.login1.Manager.ListInhibitors"))?.status == 0 }) { return }
        stop()
        throw HarnessError("the logind stand-in did not start")
    }

    /// What the daemon needs to find it.
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": system.address] }

    /// `gdbus call` on logind's manager (in a UTF-8 locale, so titles come back as written).
    public func call(_ method: String, _ arguments: [String] = []) throws -> CommandResult {
        try runProgram("/usr/bin/gdbus", (["call", "--address", system.address, "-d", "org.freedesktop.login1",
                                           "-o", "/org/freedesktop/login1", "-m", method] + arguments).map { Array($0.utf8) },
                       environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
    }

    /// The locks held, as `ListInhibitors` prints them.
    public func inhibitors() throws -> String { try call("org.freedesktop.login1.Manager.ListInhibitors").stdout }

    /// Announces a sleep (true) or the resume (false), as logind does.
    public func prepareForSleep(_ starting: Bool) throws {
        let sent = try call("org.freedesktop.DBus.Mock.EmitSignal", ["org.freedesktop.login1.Manager", "PrepareForSleep", "b", "[<\(starting)>]"])
        guard sent.status == 0 else { throw HarnessError("PrepareForSleep: \(sent.stderr)") }
    }

    /// Starts hostnamed's stand-in saying this chassis ("handset", "laptop", ...).
    public func hostnamed(chassis: String) throws {
        let name = "org.freedesktop.hostname1", path = "/org/freedesktop/hostname1"
        hostnamed = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", name, path, name],
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": system.address, "PATH": "/usr/bin:/bin"],
                                     logDirectory: system.directory)
        func gdbus(_ arguments: [String]) throws -> CommandResult {
            try runProgram("/usr/bin/gdbus", (["call", "--address", system.address, "-d", name, "-o", path] + arguments).map { Array($0.utf8) },
                           environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        }
        for _ in 0..<200 {
            if (try? gdbus(["-m", "org.freedesktop.DBus.Mock.AddProperty", name, "Chassis", "<'\(chassis)'>"]))?.status == 0 { return }
            usleep(25_000)
        }
        throw HarnessError("the hostnamed stand-in did not start")
    }

    /// Stops the stand-ins and their bus, by PID.
    public func stop() {
        hostnamed?.stop()
        logind.stop()
        system.stop()
    }
}
