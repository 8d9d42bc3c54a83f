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
/// Under the simulator it is a buffer the simulated world keeps across the daemon's kills
/// (`SimulatedFile`): the same bytes, without the system calls.
final class FiringMarker {
    let path: String
    private enum Backing {
        case file(Int32)
        case simulated(SimulatedFile)
    }
    private let backing: Backing
    /// Told when the marker cannot be written (a crash would then not be charged to its request).
    var failed: (SystemError) -> Void = { _ in }

    /// Whether a symbolic link stood where the marker goes (and was removed: the marker is never
    /// written through one, being truncated and written at every fire).
    private(set) var replacedLink = false

    init(directory: String) throws(SystemError) {
        let path = directory + "/firing"
        self.path = path
        do {
            backing = .file(try Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW))
        } catch where error.errno == .symbolicLink {
            try Sys.removeFile(path)
            backing = .file(try Sys.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW))
            replacedLink = true
        }
    }

    /// The simulator's marker: `file`'s bytes, which outlive the simulated process.
    init(simulated file: SimulatedFile) {
        path = file.name
        backing = .simulated(file)
    }

    deinit { if case .file(let fd) = backing { try? Sys.close(fd) } }

    /// The identifier that was being fired when the process last stopped, if it stopped while
    /// firing one. The file holds `<length>:<identifier>`; a torn write reads as none.
    func inFlight() -> String? {
        let buffer: [UInt8]
        switch backing {
        case .file(let fd):
            guard let read = try? Sys.read(fd, upTo: 256, at: 0, context: path) else { return nil }
            buffer = read
        case .simulated(let file):
            buffer = file.bytes
        }
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
        switch backing {
        case .file(let fd):
            do {
                try Sys.writeAll(fd, record, at: 0, context: path)
                try Sys.truncate(fd, to: record.count, context: path)
            } catch {
                failed(error)
            }
        case .simulated(let file):
            file.bytes = record
        }
    }

    /// The work is done: nothing is in flight.
    func clear() {
        guard !frozen else { return }
        switch backing {
        case .file(let fd):
            do { try Sys.truncate(fd, to: 0, context: path) } catch { failed(error) }
        case .simulated(let file):
            file.bytes.removeAll(keepingCapacity: true)
        }
    }
}

/// A small file of the simulated machine's: its bytes, kept by the simulated world while the
/// daemon that writes it is killed and started again.
public final class SimulatedFile {
    public let name: String
    var bytes: [UInt8] = []
    public init(name: String) { self.name = name }
}
