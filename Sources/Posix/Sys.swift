// The system calls chime makes, each wrapped once: every result checked, EINTR retried where a
// retry is right, and a failure thrown as a `SystemError` with the call's name, a typed `Errno`
// and what it was working on. The daemon and the commands call libc through here (and through
// the event descriptors and `Spawn`), never directly.
public import CLinux
#if canImport(Glibc)
import Glibc
#endif

public enum Sys {
    // MARK: - Files

    /// `open(2)`, always close-on-exec.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(SystemError) -> Int32 {
        try SystemError.check("open", context: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// `close(2)`. Never retried: on Linux the descriptor is gone even when it reports EINTR.
    public static func close(_ fd: Int32) throws(SystemError) {
        guard Glibc.close(fd) == 0 else {
            let error = SystemError.last("close")
            if error.errno == .interrupted { return }
            throw error
        }
    }

    /// `read(2)` into `buffer`: the bytes read (0 at the end), or nil when a non-blocking
    /// descriptor has nothing now.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let error = SystemError.last("read")
            if error.errno == .interrupted { continue }
            if error.errno == .wouldBlock { return nil }
            throw error
        }
    }

    /// Up to `count` bytes (empty at the end), or nil when a non-blocking descriptor has nothing now.
    public static func read(_ fd: Int32, upTo count: Int) throws(SystemError) -> [UInt8]? {
        try bytes(upTo: count) { buffer throws(SystemError) in try read(fd, into: buffer) }
    }

    /// `pread(2)`: up to `count` bytes at `offset`.
    public static func read(_ fd: Int32, upTo count: Int, at offset: Int, context: String = "") throws(SystemError) -> [UInt8] {
        try bytes(upTo: count) { buffer throws(SystemError) in
            try SystemError.check("pread", context: context) { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
        } ?? []
    }

    /// An array of up to `count` bytes that `fill` writes into, returning how many it wrote (nil: none
    /// to be had now). `fill` writes straight into the array's uninitialized storage: zeroing it first
    /// would touch every page of a large buffer the kernel then overwrites (a 64 KiB one cost a
    /// `chime notify` 16 page faults).
    private static func bytes(upTo count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws(SystemError) -> Int?) throws(SystemError) -> [UInt8]? {
        var failure: SystemError? = nil
        var filled = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemError) {
                guard let n = try fill(UnsafeMutableRawBufferPointer(buffer)) else { filled = false; return }
                initialized = n
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return filled ? bytes : nil
    }

    /// A whole file, read until its end or until more than `limit` bytes were read (then `limit + 1`
    /// bytes come back, so the caller can tell a file that is too large). A regular file is read
    /// in one call sized by its length; a file that cannot say its length (`/proc`, a pipe) in
    /// chunks of 4 KiB growing to 64 KiB.
    public static func readFile(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { try? close(fd) }
        var status = stat()
        let length = fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
        var chunk = length > 0 ? length + 1 : 4096
        var bytes: [UInt8] = []
        while bytes.count <= limit, let read = try read(fd, upTo: min(chunk, limit + 1 - bytes.count)), !read.isEmpty {
            if bytes.isEmpty { bytes = read } else { bytes += read }
            // A file read to its length is asked for its end (or what it grew by) in 4 KiB.
            chunk = length > 0 && bytes.count >= length ? 4096 : min(chunk * 2, 1 << 16)
        }
        return bytes
    }

    /// `write(2)` until every byte is written.
    public static func writeAll(_ fd: Int32, _ bytes: some Sequence<UInt8>) throws(SystemError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let n = array.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, array.count - offset) }
            if n < 0 {
                let error = SystemError.last("write")
                if error.errno == .interrupted { continue }
                throw error
            }
            offset += n
        }
    }

    /// `ftruncate(2)`.
    public static func truncate(_ fd: Int32, to length: Int, context: String = "") throws(SystemError) {
        try SystemError.check("ftruncate", context: context) { Glibc.ftruncate(fd, off_t(length)) }
    }

    /// `pwrite(2)` of all of `bytes` at `offset`.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, context: String = "") throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if n < 0 {
                let error = SystemError.last("pwrite", context: context)
                if error.errno == .interrupted { continue }
                throw error
            }
            done += n
        }
    }

    /// `rename(2)`.
    public static func rename(_ from: String, to: String) throws(SystemError) {
        try SystemError.check("rename", context: from) { Glibc.rename(from, to) }
    }

    /// Writes `bytes` to `path` whole or not at all: into a new file beside it, flushed to the disk,
    /// renamed over it, and the directory flushed too, so a crash or a reader at any moment finds the
    /// old file or the new one, never half of one.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(SystemError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "/." + name + ".\(getpid()).tmp"
        let fd = try open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode: mode)
        do {
            defer { try? close(fd) }
            try writeAll(fd, bytes)
            _ = try SystemError.check("fsync", context: temporary) { Glibc.fsync(fd) }
        } catch {
            try? removeFile(temporary)
            throw error
        }
        do { try rename(temporary, to: path) } catch {
            try? removeFile(temporary)
            throw error
        }
        try syncDirectory(directory)
    }

    /// Flushes a directory's entries (a rename or removal in it) to the disk.
    public static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { try? close(fd) }
        _ = try SystemError.check("fsync", context: path) { Glibc.fsync(fd) }
    }

    /// `unlink(2)`; a file that is not there is not an error.
    public static func removeFile(_ path: String) throws(SystemError) {
        guard Glibc.unlink(path) == 0 else {
            let error = SystemError.last("unlink", context: path)
            if error.errno == .noEntry { return }
            throw error
        }
    }

    /// `mkdir(2)`; a directory already there is not an error.
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(SystemError) {
        guard Glibc.mkdir(path, mode) == 0 else {
            let error = SystemError.last("mkdir", context: path)
            if error.errno == .exists { return }
            throw error
        }
    }

    /// `stat(2)`: nil when nothing is at `path` (ENOENT, ENOTDIR).
    public static func status(_ path: String) throws(SystemError) -> stat? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = SystemError.last("stat", context: path)
            if error.errno == .noEntry || error.errno == .notDirectory { return nil }
            throw error
        }
        return info
    }

    /// `realpath(3)`: `path` with every link and `.`/`..` resolved; nil when it does not resolve.
    public static func resolvedPath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What tells one version of a file from another: its device, inode, size and modification
    /// time (`stat(2)`); nil when nothing is there.
    public static func version(_ path: String) -> String? {
        guard let info = try? status(path) else { return nil }
        return "\(info.st_dev):\(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// Whether the open descriptor `fd` is a regular file (`fstat(2)`).
    public static func isRegularFile(_ fd: Int32) throws(SystemError) -> Bool {
        var info = stat()
        _ = try SystemError.check("fstat") { fstat(fd, &info) }
        return info.st_mode & S_IFMT == S_IFREG
    }

    /// Who owns what is at `path` and its permission bits (`stat(2)`); nil when nothing is there.
    public static func ownership(_ path: String) throws(SystemError) -> (owner: uid_t, mode: mode_t)? {
        try status(path).map { ($0.st_uid, $0.st_mode & 0o7777) }
    }

    /// This process's user.
    public static var userID: uid_t { getuid() }

    /// Whether `path` is a directory (false when nothing is there or it cannot be looked at).
    public static func isDirectory(_ path: String) -> Bool {
        guard let info = try? status(path) else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory (without `.` and `..`), unsorted; empty when it cannot be read.
    public static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The program `name` in the folder of the running program (chime-commands' helpers sit beside it,
    /// in libexec/chime as in the build folder).
    public static func besideThisProgram(_ name: String) -> String {
        let own = linkTarget("/proc/self/exe") ?? "/proc/self/exe"
        return String(own[..<(own.lastIndex(of: "/") ?? own.startIndex)]) + "/" + name
    }

    /// `readlink(2)`: the link's target, or nil when `path` is not a symbolic link.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = Glibc.readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `access(2)` for writing: throws why `path` cannot be written.
    public static func checkWritable(_ path: String) throws(SystemError) {
        try SystemError.check("access", context: path) { Glibc.access(path, W_OK) }
    }

    /// `access(2)` for reading: throws why `path` cannot be read.
    public static func checkReadable(_ path: String) throws(SystemError) {
        try SystemError.check("access", context: path) { Glibc.access(path, R_OK) }
    }

    /// `access(2)` for reading.
    public static func isReadable(_ path: String) -> Bool { Glibc.access(path, R_OK) == 0 }

    /// `access(2)` for execution.
    public static func isExecutable(_ path: String) -> Bool { Glibc.access(path, X_OK) == 0 }

    // MARK: - Sealed files in memory

    /// A file in memory (`memfd_create(2)`), close-on-exec, that can be sealed.
    public static func memoryFile(name: String) throws(SystemError) -> Int32 {
        try SystemError.check("memfd_create") { chime_sealable_memfd(name) }
    }

    /// Seals a memory file against every change (writes, growing, shrinking, further seals) and
    /// rewinds it: what the receiver reads is what was written.
    public static func sealAll(_ fd: Int32) throws(SystemError) {
        try SystemError.check("fcntl(F_ADD_SEALS)") { chime_seal_all(fd) }
        try SystemError.check("lseek") { Glibc.lseek(fd, 0, SEEK_SET) }
    }

    /// Whether `fd` is a memory file sealed against writes, growing and shrinking.
    public static func isSealed(_ fd: Int32) -> Bool {
        let seals = chime_seals(fd)
        return seals >= 0 && seals & (0x0002 | 0x0004 | 0x0008) == (0x0002 | 0x0004 | 0x0008)
    }

    /// The size of an open file, in bytes.
    public static func size(_ fd: Int32) throws(SystemError) -> Int {
        var info = stat()
        _ = try SystemError.check("fstat") { fstat(fd, &info) }
        return Int(info.st_size)
    }

    // MARK: - Pipes and polling

    /// `pipe2(2)`, close-on-exec; the read end non-blocking when asked.
    public static func pipe(nonBlockingRead: Bool = false) throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try SystemError.check("pipe2") { chime_pipe_cloexec(&fds) }
        if nonBlockingRead {
            let flags = try SystemError.check("fcntl") { fcntl(fds[0], F_GETFL) }
            try SystemError.check("fcntl") { fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) }
        }
        return (fds[0], fds[1])
    }

    /// `poll(2)` until something is ready or `timeout` milliseconds pass (-1: no limit): how many are ready.
    @discardableResult
    public static func poll(_ fds: inout [pollfd], timeout: Int32 = -1) throws(SystemError) -> Int {
        let count = nfds_t(fds.count)
        return Int(try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemError) -> Int32 in
            try SystemError.check("poll") { Glibc.poll(buffer.baseAddress, count, timeout) }
        })
    }

    // MARK: - Processes

    /// `kill(2)`. A process that has already gone (ESRCH) is not an error.
    public static func signal(_ pid: pid_t, _ signal: Int32) throws(SystemError) {
        guard Glibc.kill(pid, signal) == 0 else {
            let error = SystemError.last("kill", context: "process \(pid)")
            if error.errno == .noSuchProcess { return }
            throw error
        }
    }

    /// `waitpid(2)` without waiting: the wait status when `pid` has ended, nil while it runs.
    public static func reap(_ pid: pid_t) throws(SystemError) -> Int32? {
        var status: Int32 = 0
        let result = try SystemError.check("waitpid", context: "process \(pid)") { waitpid(pid, &status, WNOHANG) }
        return result == pid ? status : nil
    }

    /// `waitpid(2)`, waiting until `pid` ends: its wait status.
    public static func wait(_ pid: pid_t) throws(SystemError) -> Int32 {
        var status: Int32 = 0
        try SystemError.check("waitpid", context: "process \(pid)") { waitpid(pid, &status, 0) }
        return status
    }

    /// This process's id.
    public static var processID: pid_t { getpid() }

    /// Ends the process with `status` (standard output is flushed on the way).
    public static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// Flushes what `print` buffered, so what follows on another stream comes after it.
    public static func flushStandardOutput() {
        fflush(nil)
    }

    /// The working directory (nil: it cannot be named, e.g. it was removed).
    public static var workingDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How late the kernel may wake this thread's timers (prctl PR_SET_TIMERSLACK; 50 µs by default).
    public static func setTimerSlack(nanoseconds: UInt) throws(SystemError) {
        try SystemError.check("prctl") { chime_set_timer_slack(nanoseconds) }
    }

    /// Whether this process may gain no privileges when it starts a program (a unit's
    /// NoNewPrivileges=yes, inherited): file capabilities are then never honoured.
    public static var noNewPrivileges: Bool { chime_no_new_privs() == 1 }

    /// Empties the ambient capability set (a unit's AmbientCapabilities=), so that the programs this
    /// process starts inherit none of them; the process keeps its own.
    public static func clearAmbientCapabilities() throws(SystemError) {
        try SystemError.check("prctl") { chime_clear_ambient_capabilities() }
    }

    // MARK: - Translations

    /// Takes the locale from the environment (LANG, LC_*) and reads `domain`'s translations (gettext
    /// catalogues, `DIRECTORY/LANG/LC_MESSAGES/DOMAIN.mo`) from `directory`, as UTF-8.
    public static func setUpTranslations(domain: String, directory: String) {
        _ = setlocale(LC_ALL, "")
        _ = bindtextdomain(domain, directory)  // only fails when out of memory; gettext then answers in English
        _ = bind_textdomain_codeset(domain, "UTF-8")
        _ = textdomain(domain)
    }

    /// `message` in the user's language, where a catalogue has it (else `message` itself).
    public static func translate(_ message: String) -> String {
        // gettext answers its argument itself where there is no translation: read while that lives.
        message.withCString { String(cString: gettext($0)) }
    }

    // MARK: - Environment

    /// An environment variable (nil: unset).
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

}

extension Sys {
    /// The CPU time this thread has used, in nanoseconds (beside `monotonicNanoseconds`: whether a
    /// long stretch was work or waiting for a core).
    public static func threadCPUNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// CLOCK_MONOTONIC in nanoseconds: for measuring how long something took.
    public static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
