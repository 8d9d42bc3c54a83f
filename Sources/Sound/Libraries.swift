// libsndfile and libpulse, opened once per process the first time chime plays a sound itself
// (dlopen), and never closed. Nothing links them: the command line starts without them, and a
// machine without them rings through a player program (see CSound's header).
internal import CSound
#if canImport(Glibc)
import Glibc
#endif

/// Why chime cannot play a sound itself, in a person's words.
public struct SoundError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The two libraries' functions, found once.
struct Libraries: @unchecked Sendable {
    // Function pointers only, set once before anyone sees the value.
    let sndfile: chime_sndfile
    let pulse: chime_pulse

    /// The libraries, or why they cannot be used here; loaded on first use, by whichever thread.
    static let loaded: Result<Libraries, SoundError> = load()

    private static func load() -> Result<Libraries, SoundError> {
        var sndfile = chime_sndfile()
        var pulse = chime_pulse()
        if let problem = open("libsndfile.so.1", { chime_load_sndfile($0, &sndfile) }) { return .failure(problem) }
        if let problem = open("libpulse.so.0", { chime_load_pulse($0, &pulse) }) { return .failure(problem) }
        return .success(Libraries(sndfile: sndfile, pulse: pulse))
    }

    /// dlopens `soname` and fills a table from it: nil, or what went wrong.
    private static func open(_ soname: String, _ fill: (UnsafeMutableRawPointer) -> UnsafePointer<CChar>?) -> SoundError? {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return SoundError("\(soname) cannot be loaded (\(reason))")
        }
        if let missing = fill(handle) {
            dlclose(handle)
            return SoundError("\(soname) lacks \(String(cString: missing))")
        }
        return nil
    }
}

extension chime_pulse {
    /// The server's words for a PulseAudio error code.
    func describe(_ code: Int32) -> String {
        pa_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
