// Starting a program, wrapped once (posix_spawn): its standard streams and no other descriptor, a
// clean signal state (no blocked signals, default dispositions: a daemon that blocks signals for
// signalfd must not pass that on), optionally a process group of its own, and never a shell.
public import CLinux
#if canImport(Glibc)
import Glibc
#endif

public enum Spawn {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// /dev/null.
        case null
        /// This descriptor (dup'ed into place).
        case descriptor(Int32)
        /// A file, created or truncated (`append`: appended to).
        case file(String, append: Bool)
        /// The parent's own.
        case inherit
    }

    /// Starts `program` with `arguments` (argv[0] included; raw bytes, so tests can pass text
    /// that is not UTF-8). A program without a `/` is looked up on PATH. `environment` nil: this
    /// process's. `newProcessGroup`: the child leads a group of its own, so it and everything it
    /// starts can be stopped together.
    public static func start(_ program: String, arguments: [[UInt8]], environment: [String: String]? = nil,
                             stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .inherit,
                             newProcessGroup: Bool = false) throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            let result: Int32 = switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            case .file(let path, let append):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o600)
            case .inherit: 0
            }
            guard result == 0 else { throw SystemError("posix_spawn_file_actions", code: result, context: program) }
        }
        // Nothing else is passed on: a descriptor opened without close-on-exec (by a library, or by
        // another thread at the moment of the spawn) would keep a file open in the child for its
        // whole life, and the kernel would report that file written when the child exits.
        let closing = chime_spawn_close_from(&actions, 3)
        guard closing == 0 else { throw SystemError("posix_spawn_file_actions_addclosefrom_np", code: closing, context: program) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        let attributeResult = posix_spawnattr_setflags(&attributes, Int16(flags))
        guard attributeResult == 0 else { throw SystemError("posix_spawnattr_setflags", code: attributeResult, context: program) }

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { bytes in
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, b) in bytes.enumerated() { pointer[i] = CChar(bitPattern: b) }
            pointer[bytes.count] = 0
            return pointer
        } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { $0?.deallocate() }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result: Int32
        if let envp {
            result = program.contains(Character("/")) ? posix_spawn(&pid, program, &actions, &attributes, argv, envp)
                : posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        } else {
            result = program.contains(Character("/")) ? posix_spawn(&pid, program, &actions, &attributes, argv, environ)
                : posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        }
        guard result == 0 else { throw SystemError(program.contains(Character("/")) ? "posix_spawn" : "posix_spawnp", code: result, context: program) }
        return pid
    }
}
