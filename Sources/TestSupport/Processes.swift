import Foundation
import Posix

/// Errors of the test harness itself (a helper program missing or failing to start).
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Starts `path` through Posix's one wrapping of posix_spawn: arguments as bytes, an empty signal
/// mask and default signal actions (threads of the test runner block signals, and a child would
/// inherit that and ignore SIGTERM).
func spawn(
    _ path: String, _ arguments: [[UInt8]], environment: [String: String],
    stdout: Int32? = nil, stdoutPath: String? = nil, stderrPath: String
) throws -> pid_t {
    let output: Spawn.Stream = if let stdout { .descriptor(stdout) } else if let stdoutPath { .file(stdoutPath, append: false) } else { .inherit }
    do {
        return try Spawn.start(path, arguments: [Array(path.utf8)] + arguments, environment: environment,
                               stdin: .null, stdout: output,
                               stderr: .file(stderrPath, append: true))
    } catch {
        throw HarnessError("cannot start \(path): \(error.reason)")
    }
}

/// A child process the tests started; stopped by its PID, never by name.
public final class ChildProcess: @unchecked Sendable {
    public let name: String
    public let pid: pid_t
    private let output: Int32
    private let lock = NSLock()
    private var exited = false

    /// Starts `executable` with `arguments`; stdout is kept for `readLine`, stderr goes to a log file.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, logDirectory: URL) throws {
        guard let path = ChildProcess.which(executable) else {
            throw HarnessError("\(executable) is not installed (run `make test`, which installs it)")
        }
        name = executable
        // Both ends close-on-exec from the start: tests spawn on other threads meanwhile, and a
        // write end inherited by their children would keep this pipe open past this child's end.
        let fds: (read: Int32, write: Int32)
        do { fds = try Sys.pipe() } catch { throw HarnessError("pipe failed: \(error.reason)") }
        defer { close(fds.write) }
        do {
            pid = try spawn(
                path, arguments.map { Array($0.utf8) }, environment: environment ?? ProcessInfo.processInfo.environment,
                stdout: fds.write, stderrPath: logDirectory.appendingPathComponent("\(URL(fileURLWithPath: executable).lastPathComponent).log").path)
        } catch {
            close(fds.read)
            throw error
        }
        output = fds.read
    }

    deinit { close(output) }

    /// The first line the process writes to stdout (an address, a display number).
    public func readLine(timeout: TimeInterval = 30) throws -> String {
        var data: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var pfd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            var byte: UInt8 = 0
            if read(output, &byte, 1) != 1 { break }
            if byte == 0x0A { return String(decoding: data, as: UTF8.self) }
            data.append(byte)
        }
        throw HarnessError("\(name) printed no line within \(timeout) s")
    }

    /// Waits for output and reads what there is into `buffer`: the bytes read, 0 once the process
    /// closed its stdout.
    public func readAvailable(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let n = read(output, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            return max(0, n)
        }
    }

    /// Whether the process is still running (reaping it if it has exited).
    public var isRunning: Bool {
        lock.withLock {
            if exited { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exited = true }
            return !exited
        }
    }

    /// Sends SIGTERM to this process (by PID) and waits for it to exit; SIGKILL after 5 s.
    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while isRunning && Date() < deadline { usleep(2_000) }
        if isRunning { kill9() }
    }

    /// Kills this process with SIGKILL (a crash, as far as its peers can tell).
    public func kill9() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        lock.withLock {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exited = true
        }
    }

    /// The path of a program on PATH (or the name itself when none is found: running it then fails, saying so).
    public static func whichProgram(_ name: String) -> String { which(name) ?? name }

    static func which(_ name: String) -> String? {
        if name.hasPrefix("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/sbin", "/usr/bin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A fresh temporary directory, removed by `remove()`.
public func makeTemporaryDirectory(_ prefix: String = "chime-test") throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// What a command printed and how it exited.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs a program to completion with `environment` and returns what it printed.
/// `arguments` are raw bytes, so tests can pass text that is not UTF-8.
public func runProgram(
    _ path: String, _ arguments: [[UInt8]], environment: [String: String], timeout: TimeInterval = 30,
    whileRunning: ((Int32) -> Void)? = nil
) throws -> CommandResult {
    let directory = try makeTemporaryDirectory("chime-run")
    defer { try? FileManager.default.removeItem(at: directory) }
    let outPath = directory.appendingPathComponent("out").path
    let errPath = directory.appendingPathComponent("err").path
    let pid = try spawn(path, arguments, environment: environment, stdoutPath: outPath, stderrPath: errPath)
    whileRunning?(pid)
    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid { break }
        if Date() > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            throw HarnessError("\(path) did not finish within \(timeout) s")
        }
        usleep(2_000)
    }
    let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    return CommandResult(status: exitStatus, stdout: out, stderr: err)
}

/// How long to pause before looking again, `waited` seconds into a wait: every 20 ms for the first
/// second (what a test measures in milliseconds happens within it), then every 100 ms, and from five
/// seconds on every 250 ms. A wait that lasts is usually for something slow (a sync, a restart after
/// a pause, a busy machine), and many of them ask by starting a process (`chime status`): polled every
/// 20 ms for half a minute, a dozen such waits at once kept a two-core machine busy with them alone.
public func pollPause(after waited: TimeInterval) -> useconds_t {
    waited < 1 ? 20_000 : waited < 5 ? 100_000 : 250_000
}

/// Checks `condition` until it holds or `timeout` seconds pass (as often as `pollPause` says); its
/// last answer.
public func waitUntil(_ timeout: TimeInterval = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let begun = Date()
    let deadline = begun.addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(pollPause(after: Date().timeIntervalSince(begun)))
    }
    return try condition()
}

/// Checks `find` until it gives a value or `timeout` seconds pass (as often as `pollPause` says);
/// that value, or its last answer (nil). For state another process records a moment after what the
/// test saw (a popup the daemon records once the server has answered its Notify).
public func waitForValue<T>(_ timeout: TimeInterval = 30, _ find: () throws -> T?) rethrows -> T? {
    let begun = Date()
    let deadline = begun.addingTimeInterval(timeout)
    while Date() < deadline {
        if let value = try find() { return value }
        usleep(pollPause(after: Date().timeIntervalSince(begun)))
    }
    return try find()
}

/// Writes an executable script at `path`, its descriptor opened close-on-exec: a file written with
/// Foundation (no O_CLOEXEC) can be inherited, still open for writing, by a process another test
/// starts at that moment, and then every exec of it fails with ETXTBSY ("Text file busy").
public func installExecutable(_ text: String, at path: String) throws {
    let temporary = path + ".partial"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw HarnessError("cannot write \(temporary): errno \(errno)") }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    guard written == bytes.count else { throw HarnessError("cannot write \(temporary): errno \(errno)") }
    guard chmod(temporary, 0o755) == 0, rename(temporary, path) == 0 else { throw HarnessError("cannot install \(path): errno \(errno)") }
}
