// Programs the daemon starts: body commands, sound players, `gsettings`. Each is started
// with an argument vector (no shell), a clean signal mask and default signal
// dispositions (the daemon blocks its signals for signalfd), stdin from
// /dev/null, in its own process group so a time limit stops everything it
// started; reaped on SIGCHLD. Nothing here blocks the loop: a child's output is
// read as the loop finds it readable, and whoever started it is called back once
// it has ended (or was stopped at its time limit).
//
// The part `ChildProcesses` owns every running child. Other parts may: `start` a
// program with a time limit and a completion, `stop` one they started.
import Logging
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// One running child.
final class Child {
    let pid: pid_t
    /// The read end of its standard output, or -1 once closed (or when not captured).
    private(set) var output: Int32
    private(set) var collected: [UInt8] = []
    /// Output beyond `outputLimit` was read and dropped.
    private(set) var truncated = false
    let outputLimit: Int
    /// When it is killed.
    let deadline: Instant
    /// The wait status once reaped.
    var waitStatus: Int32?
    /// Killed for running past its deadline.
    var timedOut = false
    /// The child has been handed to whoever waited for it.
    var finished = false

    /// Its output is read by whoever started it (`readStreamed`), not collected here.
    let streaming: Bool

    init(pid: pid_t, output: Int32, outputLimit: Int, deadline: Instant, streaming: Bool = false) {
        self.pid = pid
        self.output = output
        self.outputLimit = outputLimit
        self.deadline = deadline
        self.streaming = streaming
    }

    deinit { if output >= 0 { try? Sys.close(output) } }

    /// Output read and the process reaped (a streaming child: reaped; its reader sees the rest).
    var isDone: Bool { (output < 0 || streaming) && waitStatus != nil }

    /// A streaming child's output: up to `limit` bytes available now; empty at end of file (or an
    /// error), when the pipe is closed; nil when nothing is there yet.
    func readStreamed(upTo limit: Int) -> [UInt8]? {
        guard output >= 0 else { return [] }
        do {
            guard let chunk = try Sys.read(output, upTo: limit) else { return nil }
            if !chunk.isEmpty { return chunk }
        } catch {}
        try? Sys.close(output)
        output = -1
        return []
    }

    /// Reads what is available; closes the pipe at end of file.
    func readOutput() {
        guard output >= 0 else { return }
        while true {
            let chunk: [UInt8]
            do {
                guard let read = try Sys.read(output, upTo: 4096) else { return }  // nothing more now
                chunk = read
            } catch {
                chunk = []  // an error: nothing more will come
            }
            if !chunk.isEmpty {
                let room = max(0, outputLimit - collected.count)
                collected.append(contentsOf: chunk.prefix(room))
                if chunk.count > room { truncated = true }
                continue
            }
            try? Sys.close(output)  // end of file
            output = -1
            return
        }
    }

    /// Stops the child and everything it started.
    func kill() {
        guard waitStatus == nil else { return }
        // The group first (everything it started), then the child itself should it have left it.
        try? Sys.signal(-pid, SIGKILL)
        try? Sys.signal(pid, SIGKILL)
    }

    /// "exit status 3", "killed by signal 9": how it ended.
    var ending: String {
        guard let status = waitStatus else { return "still running" }
        if status & 0x7f == 0 { return "exit status \((status >> 8) & 0xff)" }
        return "killed by signal \(status & 0x7f)"
    }

    var succeeded: Bool { waitStatus.map { $0 & 0x7f == 0 && ($0 >> 8) & 0xff == 0 } ?? false }
}

/// Why a program could not be started.
struct SpawnError: Error, CustomStringConvertible {
    var description: String
    /// The system's reason alone ("No such file or directory").
    var reason: String = ""
}

/// What a child of the daemon (a body command, a sound player) finds in its environment: the
/// session's own places (its bus, display, sound server, runtime and data folders), the user and
/// their language and zone, and nothing else the daemon was started with (documented in
/// chime-daemon(1), ENVIRONMENT).
let childEnvironmentNames: Set<String> = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER", "PULSE_SINK", "XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "GSETTINGS_BACKEND",
    "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_TIME", "LC_NUMERIC", "LC_COLLATE", "LC_MONETARY", "LC_PAPER", "LC_NAME",
    "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
]

/// The daemon's environment as its children get it (read once: the daemon's own never changes).
let childEnvironment: [String: String] = {
    var kept: [String: String] = [:]
    for name in childEnvironmentNames {
        if let value = Sys.environment(name) { kept[name] = value }
    }
    if kept["PATH"] == nil { kept["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
    return kept
}()

/// Starts `arguments` (a bare program name is looked up on `PATH`).
/// With `captureOutput`, standard output goes to a non-blocking pipe the loop
/// polls; otherwise to /dev/null. Standard error stays the daemon's (the journal).
func spawnChild(_ arguments: [String], captureOutput: Bool, outputLimit: Int, deadline: Instant, streaming: Bool = false,
                environment: [String: String] = childEnvironment) throws(SpawnError) -> Child {
    guard let program = arguments.first, !program.isEmpty else { throw SpawnError(description: "no program given") }
    var pipe: (read: Int32, write: Int32)?
    do {
        if captureOutput { pipe = try Sys.pipe(nonBlockingRead: true) }
        // A streaming child (the alarm file's reader) may run 1 MiB ahead of the loop, not 64 KiB:
        // it stops less often to wait for the loop to read (best effort: the system may refuse).
        if streaming, let pipe { _ = fcntl(pipe.write, 1031, 1 << 20) }  // F_SETPIPE_SZ (Linux; not in the Glibc module)
        let pid = try Spawn.start(program, arguments: arguments.map { Array($0.utf8) }, environment: environment, stdin: .null,
                                  stdout: pipe.map { .descriptor($0.write) } ?? .null, stderr: .inherit, newProcessGroup: true)
        if let pipe { try? Sys.close(pipe.write) }
        return Child(pid: pid, output: pipe?.read ?? -1, outputLimit: outputLimit, deadline: deadline, streaming: streaming)
    } catch {
        if let pipe {
            try? Sys.close(pipe.read)
            try? Sys.close(pipe.write)
        }
        throw SpawnError(description: "cannot start \(program): \(error.reason)", reason: error.reason)
    }
}


/// Every program the daemon runs, by process id: started, read, stopped at its time limit, reaped,
/// and handed back to whoever started it.
final class ChildProcesses: LoopPart {
    private struct Running {
        let child: Child
        /// Called once, when the child has ended or was stopped at its time limit.
        let ended: (Child) -> Void
    }

    private var running: [pid_t: Running] = [:]
    private let clock: WallClock
    private let logger: Logger

    init(clock: WallClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    /// How many are running (or ended and not yet reaped).
    var count: Int { running.count }

    /// Starts `arguments`; `ended` is called once the program has ended (its output read to the end
    /// when captured) or was stopped for running past `timeLimit`.
    @discardableResult
    func start(_ arguments: [String], captureOutput: Bool = false, outputLimit: Int = 0, timeLimit: TimeSpan,
               ended: @escaping (Child) -> Void) throws(SpawnError) -> pid_t {
        let child = try spawnChild(arguments, captureOutput: captureOutput, outputLimit: outputLimit, deadline: clock.now() + timeLimit)
        running[child.pid] = Running(child: child, ended: ended)
        return child.pid
    }

    /// Starts `arguments` with its standard output for the caller to read as it comes
    /// (`Child.readStreamed`, from the caller's own descriptors); `ended` as for `start`, once it
    /// was reaped (or stopped at its time limit).
    func startStreaming(_ arguments: [String], environment: [String: String], timeLimit: TimeSpan,
                        ended: @escaping (Child) -> Void) throws(SpawnError) -> Child {
        let child = try spawnChild(arguments, captureOutput: true, outputLimit: 0, deadline: clock.now() + timeLimit, streaming: true,
                                   environment: environment)
        running[child.pid] = Running(child: child, ended: ended)
        return child
    }

    /// Stops a child (and everything it started) at once; its completion still runs.
    func stop(_ pid: pid_t) {
        running[pid]?.child.kill()
    }

    /// SIGCHLD: collects the children of ours that ended (only ours: a process that embeds the
    /// daemon may have children of its own, and their statuses are not ours to take).
    func reap() {
        for (pid, entry) in running where entry.child.waitStatus == nil {
            do {
                if let status = try Sys.reap(pid) { entry.child.waitStatus = status }
            } catch {
                // Not ours to wait for any more (ECHILD): it is gone; say so rather than wait for ever.
                logger.warning("\(error)")
                entry.child.waitStatus = 0x7f00  // exit status 127
            }
        }
        settle()
    }

    var descriptors: [Int32] { running.values.compactMap { $0.child.output >= 0 && !$0.child.streaming ? $0.child.output : nil } }

    var deadline: Instant? { running.values.filter { !$0.child.finished }.map(\.child.deadline).min() }

    func readable(_ fd: Int32) {
        running.values.first { $0.child.output == fd }?.child.readOutput()
        settle()
    }

    func deadlineReached(now: Instant) { settle() }

    /// Stops children past their time limit, hands ended ones to whoever started them, and forgets
    /// those that are handed back and reaped.
    private func settle() {
        let now = clock.now()
        for (pid, entry) in running {
            let child = entry.child
            if !child.finished, !child.isDone, now >= child.deadline {
                child.kill()
                child.timedOut = true
                logger.warning("stopped \(pid): it ran past its time limit")
            }
            if !child.finished, child.isDone || child.timedOut {
                child.finished = true
                entry.ended(child)
            }
            if child.finished, child.waitStatus != nil { running[pid] = nil }
        }
    }
}
