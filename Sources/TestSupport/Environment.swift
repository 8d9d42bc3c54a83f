import DBus
import Foundation

/// The `chime` the tests run: `CHIME_BINARY` when set (make test sets it to the release build, what
/// the packages hold, with chime-commands, chime-eds and chime-alarms beside it; its symbolic links
/// resolved, as the daemon sees its own path), else the test build's (`testBuildChimePath`).
public func chimeBinaryPath() -> String {
    if let path = ProcessInfo.processInfo.environment["CHIME_BINARY"], !path.isEmpty {
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
    return testBuildChimePath()
}

/// The `chime` of the test build, beside the test bundle (and the modules it was built with): a
/// debug build, the only kind that obeys the tests' `CHIME_TEST_` switches (a crash while firing,
/// a reader that hangs, a localtime of the test's own); release builds have none.
public func testBuildChimePath() -> String {
    let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory = directory.deletingLastPathComponent() }
    return directory.appendingPathComponent("chime").path
}

/// Runs the built `chime` with `arguments` on the bus of `environment`.
public func runChime(
    _ arguments: [String], environment: [String: String], timeout: TimeInterval = 30,
    whileRunning: ((Int32) -> Void)? = nil
) throws -> CommandResult {
    try runProgram(chimeBinaryPath(), arguments.map { Array($0.utf8) }, environment: environment, timeout: timeout,
                   whileRunning: whileRunning)
}

/// A private bus with dunst on it: the real notification server of a test.
public final class DunstSession: @unchecked Sendable {
    public let bus: PrivateBus
    public let dunst: Dunst

    public init() throws {
        bus = try PrivateBus()
        do {
            dunst = try Dunst(bus: bus)
        } catch {
            bus.stop()
            throw error
        }
    }

    /// Stops dunst, Xvfb and the bus, by PID.
    public func stop() {
        dunst.stop()
        bus.stop()
    }
}

/// A private bus with our recording notification server on it.
public final class RecorderSession: @unchecked Sendable {
    public let bus: PrivateBus
    public let recorder: RecordingServer

    public init(capabilities: [String] = ["actions", "body", "body-markup", "persistence"],
                autoResponse: RecordingServer.AutoResponse = .none) throws {
        bus = try PrivateBus()
        do {
            recorder = try RecordingServer(address: bus.address, capabilities: capabilities, autoResponse: autoResponse)
        } catch {
            bus.stop()
            throw error
        }
    }

    public var environment: [String: String] { bus.environment() }

    public func stop() {
        recorder.stop()
        bus.stop()
    }
}

/// A `chime daemon` process on a private bus, stopped by its PID.
public final class DaemonProcess: @unchecked Sendable {
    public let stateDirectory: String
    private let child: ChildProcess
    public var pid: Int32 { child.pid }
    /// The log file's name (after the program started: chime, or the wrapper).
    private let logName: String

    /// Starts `chime daemon` and waits until it owns its bus name: the test build's when `environment`
    /// sets one of the `CHIME_TEST_` switches only it obeys, else the one the tests run.
    /// `wrapper`: a program that runs the daemon (e.g. `setpriv` dropping a capability).
    /// `waitForFile`: once it owns its name, wait too for its first reading of the alarm file.
    public init(bus: PrivateBus, stateDirectory: String, waitForName: Bool = true, waitForFile: Bool = true, arguments: [String] = [],
                environment: [String: String] = [:], wrapper: [String] = []) throws {
        self.stateDirectory = stateDirectory
        let binary = environment.keys.contains { $0.hasPrefix("CHIME_TEST_") } ? testBuildChimePath() : chimeBinaryPath()
        let command = wrapper + [binary, "daemon", "--state-dir", stateDirectory] + arguments
        logName = URL(fileURLWithPath: command[0]).lastPathComponent + ".log"
        // No test reaches the sound server of the session it runs in (a developer's speakers):
        // chime's own player finds none unless a test gives it its own (PulseAudioSession).
        let quiet = ["PULSE_SERVER": "unix:/nonexistent/chime-test-no-sound-server"]
        child = try ChildProcess(command[0], Array(command.dropFirst()),
                                 environment: bus.environment().merging(quiet) { $1 }.merging(environment) { $1 },
                                 logDirectory: URL(fileURLWithPath: stateDirectory).deletingLastPathComponent())
        if waitForName {
            try waitUntilOwner(bus: bus)
            if waitForFile { try waitUntilFileRead(bus: bus) }
        }
    }

    /// Waits until the daemon's first reading of its alarm file is over (it answers at once, and
    /// reads the file in a child meanwhile): a test of the file's alarms starts from them.
    func waitUntilFileRead(bus: PrivateBus, timeout: TimeInterval = 30) throws {
        let connection = try bus.connect()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let reply: [Value]
            do {
                reply = try connection.call(destination: "org.chime.Scheduler", path: "/org/chime/Scheduler",
                                            interface: "org.chime.Scheduler1", member: "AlarmFileStatus")
            } catch {
                // A daemon meant to crash may be gone already: the test waits for that itself.
                usleep(50_000)
                if !child.isRunning { return }
                throw error
            }
            let reading = reply.first?.dictionaryEntries?.first { $0.key.stringValue == "reading" }?.value.unwrappingVariants
            if reading != .boolean(true) { return }
            if !child.isRunning { throw HarnessError("chime daemon exited: \(log)") }
            usleep(5_000)
        }
        throw HarnessError("chime daemon did not read its alarm file within \(timeout) s")
    }

    /// Waits until this process (not an earlier, dying daemon) owns the scheduler's name.
    func waitUntilOwner(bus: PrivateBus, timeout: TimeInterval = 30) throws {
        let connection = try bus.connect()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let owner = try connection.nameOwner("org.chime.Scheduler"),
                let reply = try? connection.call(destination: .bus, path: "/org/freedesktop/DBus", interface: .dbus,
                                                 member: "GetConnectionUnixProcessID", arguments: [.string(owner)]),
                reply.first?.uint32Value == UInt32(pid)
            {
                return
            }
            if !child.isRunning { throw HarnessError("chime daemon exited: \(log)") }
            usleep(5_000)
        }
        throw HarnessError("chime daemon did not take its name within \(timeout) s")
    }

    /// The daemon's log so far (stderr of every daemon started with this state directory's parent).
    public var log: String {
        (try? String(contentsOfFile: URL(fileURLWithPath: stateDirectory).deletingLastPathComponent().appendingPathComponent(logName).path,
                     encoding: .utf8)) ?? ""
    }

    public var isRunning: Bool { child.isRunning }

    /// Waits for a daemon that is meant to crash to die: whether it did within `timeout`.
    public func waitForExit(timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !isRunning { return true }
            usleep(10_000)
        }
        return false
    }

    /// SIGTERM, and wait.
    public func stop() { child.stop() }

    /// SIGKILL: a crash.
    public func kill() { child.kill9() }
}
