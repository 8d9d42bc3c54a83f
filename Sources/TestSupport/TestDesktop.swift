import Foundation
import Posix

/// One private test desktop, made by the project's one harness, `scripts/testdesktop.py` (its `serve`
/// mode): a session bus, and when asked an X display, dunst, PulseAudio with a null sink, the
/// accessibility bus. The harness starts and stops every process by its PID, bounds how many
/// desktops run at once on the machine, and stops all of its desktop when this process goes away
/// (its standard input ends), even if a test crashed.
public final class TestDesktop: @unchecked Sendable {
    public struct Parts: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let bus = Parts(rawValue: 1)
        public static let display = Parts(rawValue: 2)
        public static let dunst = Parts(rawValue: 4)
        public static let sound = Parts(rawValue: 8)
        public static let accessibility = Parts(rawValue: 16)
    }

    /// The harness, beside this file in the repository.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/testdesktop.py").path

    /// The desktop's own directory (removed when it stops).
    public let directory: URL
    private let lock = NSLock()
    private var _environment: [String: String]
    private var _pids: [String: Int32]
    private let supervisor: pid_t
    private let input: Int32
    private let output: Int32
    /// What the harness says on its standard error: a file already unlinked (nothing is left in
    /// the temporary folder, even when the process ends without stopping the desktop).
    private let log: Int32
    private var stopped = false

    /// What the desktop sets for programs living in it: `DBUS_SESSION_BUS_ADDRESS`, `DISPLAY`,
    /// `PULSE_SERVER` (a socket that does not exist where the desktop has no sound server), ...
    public var environment: [String: String] { lock.withLock { _environment } }
    /// Its processes by name: `session-bus`, `display`, `dunst`, `sound`, ...
    public var pids: [String: Int32] { lock.withLock { _pids } }

    public init(_ parts: Parts, serviceDirectory: String? = nil) throws {
        // A test waits for a place among the machine's desktops at most 5 s: while it waits it holds
        // one of the test runner's few threads, which the tests holding the places may need to finish.
        var arguments = [Self.script, "serve", "--wait", "5"]
        if !parts.contains(.bus) { arguments.append("--no-bus") }
        if parts.contains(.display) { arguments.append("--display") }
        if parts.contains(.dunst) { arguments.append("--dunst") }
        if parts.contains(.sound) { arguments.append("--sound") }
        if parts.contains(.accessibility) { arguments.append("--accessibility") }
        if let serviceDirectory { arguments += ["--services", serviceDirectory] }
        let toChild: [Int32]
        let fromChild: [Int32]
        do {
            let (inRead, inWrite) = try Sys.pipe()
            let (outRead, outWrite) = try Sys.pipe()
            (toChild, fromChild) = ([inRead, inWrite], [outRead, outWrite])
        } catch { throw HarnessError("pipe failed: \(error.reason)") }
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("chime-desktop-\(UUID().uuidString.prefix(8)).log").path
        log = open(logPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard log >= 0 else {
            for fd in toChild + fromChild { close(fd) }
            throw HarnessError("cannot make the test desktop's log \(logPath) (errno \(errno))")
        }
        unlink(logPath)
        do {
            supervisor = try Spawn.start("/usr/bin/python3", arguments: ([ "/usr/bin/python3"] + arguments).map { Array($0.utf8) },
                                         environment: ProcessInfo.processInfo.environment,
                                         stdin: .descriptor(toChild[0]), stdout: .descriptor(fromChild[1]), stderr: .descriptor(log))
        } catch {
            for fd in toChild + fromChild + [log] { close(fd) }
            throw HarnessError("cannot start the test desktop (\(Self.script)): \(error.reason)")
        }
        close(toChild[0])
        close(fromChild[1])
        input = toChild[1]
        output = fromChild[0]
        let description: [String: Any]
        do {
            description = try Self.readAnswer(output, timeout: 120)
        } catch {
            let said = Self.contents(of: log)
            close(input)
            close(output)
            close(log)
            var status: Int32 = 0
            kill(supervisor, SIGKILL)
            waitpid(supervisor, &status, 0)
            throw HarnessError("the test desktop did not start: \(said.isEmpty ? "\(error)" : said)")
        }
        directory = URL(fileURLWithPath: description["directory"] as? String ?? "/nonexistent")
        _environment = description["env"] as? [String: String] ?? [:]
        _pids = (description["pids"] as? [String: Int] ?? [:]).mapValues { Int32($0) }
    }

    deinit { stop() }

    /// Sends one of the harness's commands (`start dunst`, `stop dunst`, `kill dunst`) and takes in
    /// what the desktop is afterwards.
    public func command(_ line: String) throws {
        let answer: [String: Any] = try lock.withLock {
            guard !stopped else { throw HarnessError("the test desktop was stopped") }
            let bytes = Array((line + "\n").utf8)
            guard bytes.withUnsafeBytes({ write(input, $0.baseAddress, $0.count) }) == bytes.count else {
                throw HarnessError("the test desktop does not listen (errno \(errno))")
            }
            return try Self.readAnswer(output, timeout: 60)
        }
        if let error = answer["error"] as? String { throw HarnessError("test desktop: \(line): \(error)") }
        lock.withLock {
            for (key, value) in answer["env"] as? [String: String] ?? [:] { _environment[key] = value }
            _pids = (answer["pids"] as? [String: Int] ?? [:]).mapValues { Int32($0) }
        }
    }

    /// Stops the desktop: the harness stops each process by its PID and removes the directory.
    public func stop() {
        let already = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !already else { return }
        close(input)  // the end of its input: the harness stops everything and exits
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(20)
        while waitpid(supervisor, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(supervisor, SIGKILL)
                waitpid(supervisor, &status, 0)
                break
            }
            usleep(5_000)
        }
        close(output)
        close(log)
    }

    /// What was written to `fd` (a file), from its start.
    private static func contents(of fd: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var offset: off_t = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
            offset += off_t(n)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One line of JSON from the harness.
    private static func readAnswer(_ fd: Int32, timeout: TimeInterval) throws -> [String: Any] {
        var line: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HarnessError("no answer from the test desktop within \(Int(timeout)) s") }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(min(left, 1) * 1000)) > 0 else { continue }
            var byte: UInt8 = 0
            let n = read(fd, &byte, 1)
            if n < 0, errno == EINTR { continue }
            guard n == 1 else { throw HarnessError("the test desktop ended") }
            if byte == 0x0A { break }
            line.append(byte)
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw HarnessError("the test desktop said: \(String(decoding: line, as: UTF8.self))")
        }
        return object
    }
}
