// A sound file decoded as it plays (libsndfile: WAV, FLAC, Ogg Vorbis, Opus, MP3), never whole into
// memory: a ten-minute song costs what a bell does. It loops without a seam: the frame after the
// last is the first again, in the same read.
internal import CSound
import Posix
#if canImport(Glibc)
import Glibc
#endif

final class SoundFile {
    let path: String
    let channels: Int
    let rate: Int
    /// Frames in the file, as its header says.
    let frames: Int64
    private let handle: OpaquePointer
    private let sndfile: chime_sndfile

    /// The most channels and the highest rate chime plays (PulseAudio takes 32 channels; no alarm
    /// sound has more than a few).
    static let channelLimit = 8
    static let rateLimit = 384_000

    /// Opens `path` for decoding: a regular file (a FIFO or a device would block the reading thread),
    /// in a format libsndfile reads, with sound in it.
    ///
    /// The file is opened once, and what was opened is what is checked and decoded: a link is
    /// resolved first (sound themes are made of them), then the resolved path is opened without
    /// following a link and without blocking, and the descriptor must be a regular file; libsndfile
    /// reads that descriptor. A link flipped meanwhile to a FIFO or a device is refused at once,
    /// never waited on (it once held the daemon in `open` for good).
    init(path: String) throws(SoundError) {
        let sndfile: chime_sndfile
        switch Libraries.loaded {
        case .success(let libraries): sndfile = libraries.sndfile
        case .failure(let error): throw error
        }
        guard let resolved = Sys.resolvedPath(path) else { throw SoundError("no sound file \(path)") }
        let fd: Int32
        do {
            fd = try Sys.open(resolved, O_RDONLY | O_NONBLOCK | O_NOFOLLOW)
        } catch where error.errno == .symbolicLink {
            throw SoundError("\(path) changed while it was opened; not played")
        } catch {
            throw SoundError("cannot read \(path): \(error.reason.lowercased())")
        }
        let isRegular: Bool
        do { isRegular = try Sys.isRegularFile(fd) } catch {
            try? Sys.close(fd)
            throw SoundError("cannot read \(path): \(error.reason.lowercased())")
        }
        guard isRegular else {
            try? Sys.close(fd)
            throw SoundError("\(path) is not a regular file")
        }
        var format = SF_INFO()
        // libsndfile closes the descriptor with the handle (or now, when it cannot open it).
        guard let handle = sndfile.sf_open_fd(fd, Int32(SFM_READ), &format, 1) else {
            let reason = sndfile.sf_strerror(nil).map { String(cString: $0) } ?? "unknown format"
            throw SoundError("cannot decode \(path): \(reason)")
        }
        guard format.channels >= 1, format.channels <= Self.channelLimit, format.samplerate >= 1,
            format.samplerate <= Self.rateLimit, format.frames > 0
        else {
            _ = sndfile.sf_close(handle)
            throw SoundError(format.frames <= 0 ? "\(path) holds no sound"
                : "\(path) has \(format.channels) channel(s) at \(format.samplerate) Hz: chime plays 1 to \(Self.channelLimit) channels up to \(Self.rateLimit) Hz")
        }
        self.path = path
        self.handle = handle
        self.sndfile = sndfile
        channels = Int(format.channels)
        rate = Int(format.samplerate)
        frames = Int64(format.frames)
    }

    deinit { _ = sndfile.sf_close(handle) }

    /// How long one play of the file lasts.
    var seconds: Double { Double(frames) / Double(rate) }

    /// Decodes up to `count` frames (interleaved floats, -1...1) into `buffer`; when `looping`, the
    /// file starts again after its last frame within the same call. Returns the frames decoded:
    /// fewer than `count` only at the end of a file that does not loop, or when decoding fails
    /// (a damaged file ends there).
    func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int, looping: Bool) -> Int {
        var done = 0
        var fromTheStart = false
        while done < count {
            let got = Int(sndfile.sf_readf_float(handle, buffer + done * channels, sf_count_t(count - done)))
            done += got
            // The end, or a decoding error: from the start again, unless the start gave nothing.
            if done == count || !looping || (got == 0 && fromTheStart) { break }
            guard sndfile.sf_seek(handle, 0, SEEK_SET) == 0 else { break }
            fromTheStart = true
        }
        return done
    }
}
