// Which request the daemon is firing right now, in a small file beside the store, so a
// crash while firing one request costs at most that request: at the next start the
// daemon knows which request was in flight, and one in flight at two crashes is
// quarantined instead of crashing the daemon again and again.
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// `firing` in the state directory: the identifier being fired, written before the work
/// and cleared after it. A write is two system calls and no fsync (it must survive the
/// daemon crashing, not the machine losing power), so no alarm waits on the disk for it.
final class FiringMarker {
    let path: String
    private let fd: Int32
    /// Told when the marker cannot be written (a crash would then not be charged to its request).
    var failed: (SystemError) -> Void = { _ in }

    /// Whether a symbolic link stood where the marker goes (and was removed: the marker is never
    /// written through one, being truncated and written at every fire).
    private(set) var replacedLink = false

    init(directory: String) throws(SystemError) {
        let path = directory + "/firing"
        self.path = path
        do {
            fd = try Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW)
        } catch where error.errno == .symbolicLink {
            try Sys.removeFile(path)
            fd = try Sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW)
            replacedLink = true
        }
    }

    deinit { try? Sys.close(fd) }

    /// The identifier that was being fired when the process last stopped, if it stopped while
    /// firing one. The file holds `<length>:<identifier>`; a torn write reads as none.
    func inFlight() -> String? {
        guard let buffer = try? Sys.read(fd, upTo: 256, at: 0, context: path) else { return nil }
        let count = buffer.count
        guard count > 2, let colon = buffer[0..<count].firstIndex(of: UInt8(ascii: ":")),
            let length = Int(String(decoding: buffer[0..<colon], as: UTF8.self)), colon + 1 + length <= count
        else { return nil }
        return String(decoding: buffer[(colon + 1)..<(colon + 1 + length)], as: UTF8.self)
    }

    /// The simulator's crash: the process is taken as killed, so the marker stays as it was.
    var frozen = false

    /// Notes that `identifier` is being fired now.
    func set(_ identifier: String) {
        guard !frozen else { return }
        // Identifiers are at most 200 bytes (an older store's may be longer: cut, it only names the suspect).
        let bytes = Array(identifier.utf8.prefix(240))
        let record = Array("\(bytes.count):".utf8) + bytes
        do {
            try Sys.writeAll(fd, record, at: 0, context: path)
            try Sys.truncate(fd, to: record.count, context: path)
        } catch {
            failed(error)
        }
    }

    /// The work is done: nothing is in flight.
    func clear() {
        guard !frozen else { return }
        do { try Sys.truncate(fd, to: 0, context: path) } catch { failed(error) }
    }
}
