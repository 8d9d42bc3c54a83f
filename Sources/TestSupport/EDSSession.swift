import DBus
import Foundation

/// Debian's Evolution Data Server on a private session bus, headless: the source registry and the
/// calendar factory are activated on that bus, in a scratch home (their folders and settings are
/// the test's, never the user's: GSettings too, in the scratch home's keyfile, which every process
/// of the test shares, as dconf shares them in a session), and stopped by their PIDs with it.
public final class EDSSession: @unchecked Sendable {
    public let bus: PrivateBus
    /// The scratch home EDS keeps its sources and calendars in.
    public let home: URL
    private let services: URL

    /// EDS's D-Bus services, as Debian installs them.
    static let serviceNames = ["org.gnome.evolution.dataserver.Sources5", "org.gnome.evolution.dataserver.Calendar8",
                               "org.gnome.evolution.dataserver.UserPrompter0"]

    public init() throws {
        let scratch = try makeTemporaryDirectory("chime-eds")
        let home = scratch.appendingPathComponent("home")
        let services = scratch.appendingPathComponent("services")
        self.home = home
        self.services = services
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        // Each service as Debian ships it, its program started with the scratch home.
        for name in Self.serviceNames {
            let installed = "/usr/share/dbus-1/services/\(name).service"
            guard let text = try? String(contentsOfFile: installed, encoding: .utf8) else {
                throw HarnessError("\(installed) is missing: Evolution Data Server is not installed (make test installs it)")
            }
            let wrapped = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                guard line.hasPrefix("Exec=") else { return String(line) }
                return "Exec=/usr/bin/env " + Self.scratchEnvironment(home).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
                    + " " + line.dropFirst("Exec=".count)
            }.joined(separator: "\n")
            try wrapped.write(to: services.appendingPathComponent("\(name).service"), atomically: true, encoding: .utf8)
        }
        bus = try PrivateBus(serviceDirectory: services.path)
    }

    static func scratchEnvironment(_ home: URL) -> [String: String] {
        ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/.config", "XDG_DATA_HOME": home.path + "/.local/share",
         "XDG_CACHE_HOME": home.path + "/.cache", "XDG_RUNTIME_DIR": home.path + "/.run", "GSETTINGS_BACKEND": "keyfile"]
    }

    /// What a client of this EDS needs: the bus, the scratch home.
    public func environment(extra: [String: String] = [:]) -> [String: String] {
        bus.environment(extra: Self.scratchEnvironment(home).merging(extra) { $1 })
    }

    /// Runs Tests/eds/eds.py with `arguments` (create, modify, remove, list: see it).
    @discardableResult
    public func python(_ arguments: [String], file: String = #filePath) throws -> CommandResult {
        let script = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("eds/eds.py").path
        let result = try runProgram("/usr/bin/python3", ([script] + arguments).map { Array($0.utf8) }, environment: environment(), timeout: 120)
        guard result.status == 0 else { throw HarnessError("eds.py \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
        return result
    }

    /// The PIDs of EDS's processes on this bus (activated by it: the registry, the factory and its
    /// backends' subprocesses).
    public func pids() -> [Int32] {
        guard let connection = try? bus.connect(),
            let names = try? connection.call(destination: .bus, path: "/org/freedesktop/DBus", interface: .dbus, member: "ListNames"),
            let list = names.first?.arrayElements?.compactMap(\.stringValue)
        else { return [] }
        var pids = Set<Int32>()
        for name in list where name.hasPrefix(":") {
            guard let reply = try? connection.call(destination: .bus, path: "/org/freedesktop/DBus", interface: .dbus,
                                                   member: "GetConnectionUnixProcessID", arguments: [.string(name)]),
                let pid = reply.first?.uint32Value,
                let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8), comm.hasPrefix("evolution-")
            else { continue }
            pids.insert(Int32(pid))
        }
        return pids.sorted()
    }

    /// Stops EDS (by its PIDs), as a crash of it would.
    public func killEDS() {
        for pid in pids() { kill(pid, SIGKILL) }
    }

    public func stop() {
        let running = pids()
        for pid in running { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, running.contains(where: { kill($0, 0) == 0 }) { usleep(20_000) }
        for pid in running where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        bus.stop()
        try? FileManager.default.removeItem(at: home.deletingLastPathComponent())
    }
}
