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
    init(path: String) throws(SoundError) {
        let sndfile: chime_sndfile
        switch Libraries.loaded {
        case .success(let libraries): sndfile = libraries.sndfile
        case .failure(let error): throw error
        }
        let info: stat?
        do { info = try Sys.status(path) } catch { throw SoundError("cannot read \(path): \(error.reason.lowercased())") }
        guard let info else { throw SoundError("no sound file \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SoundError("\(path) is not a regular file") }
        var format = SF_INFO()
        guard let handle = sndfile.sf_open(path, Int32(SFM_READ), &format) else {
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
