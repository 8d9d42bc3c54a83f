// A sound file is decoded in a process of its own (`chime daemon --decode-sound PATH`), never in
// the daemon: libsndfile parses files anyone can name (a sound theme, a calendar's alarm, a path on
// the command line), and a parser's crash or endless loop there must end that sound, not the alarms.
// The decoder opens the file (SoundFile: once, without following a last link, without blocking),
// writes a header (channels, rate, frames) and then the sound as interleaved 32-bit floats, again
// and again when it loops, into a pipe; the playback reads the pipe from libpulse's thread.
//
// The header is waited for a bounded time (`headerWait`), on a thread of the sound server's, never
// on the daemon's loop (only `chime sound play`'s length, asked before a preview, waits on it); after
// it, nothing waits: a read takes what the pipe holds, and a decoder that falls behind is heard as
// silence until it catches up. A decoder that dies (a signal), says nothing within the header's
// time, or gives nothing for `stallLimit` of sound, ends the sound `undecodable` with why, and the
// daemon plays its default sound instead; a file the decoder says is no sound ends it `failed`.
//
// Wire: "CHSD", channels (u32), rate (u32), frames (i64), then the samples; or "CHSE", a length
// (u32) and why the file cannot be played.
internal import CSound
import Dispatch
import Posix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What one read of a decoded sound gave.
enum DecodedRead: Equatable {
    /// `frames` frames, some of them silence if the decoder was behind.
    case frames(Int)
    /// The sound is over (a sound that plays once, at its end; or a damaged file, where it broke).
    case end(Int)
    /// The decoder died or stalled: why.
    case failed(String)
}

final class DecodedSound {
    let path: String
    /// What the header says (once `readHeader` has read it).
    private(set) var channels = 0
    private(set) var rate = 0
    private(set) var frames: Int64 = 0
    private let pid: pid_t
    private var fd: Int32
    /// Bytes of a frame read only in part (a pipe splits where it likes).
    private var partial: [UInt8] = []
    /// Frames of sound taken from the decoder so far.
    private var delivered: Int64 = 0
    var received: Int64 { delivered }
    /// Frames of silence written in a row for want of sound.
    private var starved = 0
    private var reaped: Int32?

    /// How long the decoder has to say what the file holds: a process of its own started, on a
    /// machine that may be busy (beside two CPU-bound jobs the tests saw 1 s pass before a sound's
    /// decoder spoke). Past it the default sound plays instead.
    static let headerWait: Int32 = 5000  // milliseconds
    /// How much sound in a row a decoder may leave unsent before it counts as stalled.
    static let stallLimit = 2.0  // seconds

    /// The decoder: the daemon's own program (`--decode-sound` is added), set by whoever plays.
    nonisolated(unsafe) static var decoder: [String] = []

    /// Starts the decoder for `path` (or hands `path` to the spare one, started before and waiting:
    /// a program's start is 10-20 ms, which an alarm's first sample should not wait for); its header
    /// is read by `readHeader` (which waits for it).
    init(path: String, looping: Bool) throws(SoundError) {
        guard !Self.decoder.isEmpty else { throw SoundError("no sound decoder is set") }
        if let spare = Spare.take(), spare.hand(path, looping: looping) {
            self.path = path
            pid = spare.pid
            fd = spare.output
            return
        }
        let started: (pid: pid_t, output: Int32)
        do { started = try Self.start([path] + (looping ? ["--loop"] : []), stdin: .null) } catch {
            throw SoundError("cannot start the sound decoder: \(error.reason.lowercased())")
        }
        self.path = path
        pid = started.pid
        fd = started.output
    }

    /// Starts the decoder with `arguments` after `--decode-sound`: its pid and the (non-blocking)
    /// read end of its output, a pipe with room for about 2.7 s of 48 kHz stereo ahead of the player
    /// (the most an unprivileged process may ask; the default 64 KiB would be 0.17 s).
    static func start(_ arguments: [String], stdin: Spawn.Stream) throws(SystemError) -> (pid: pid_t, output: Int32) {
        let pipe = try Sys.pipe(nonBlockingRead: true)
        _ = fcntl(pipe.write, 1031, 1 << 20)  // F_SETPIPE_SZ (Linux; not in the Glibc module)
        let command = decoder + ["--decode-sound"] + arguments
        defer { _ = close(pipe.write) }
        do {
            let pid = try Spawn.start(command[0], arguments: command.map { Array($0.utf8) }, environment: environment,
                                      stdin: stdin, stdout: .descriptor(pipe.write), stderr: .inherit, newProcessGroup: true)
            return (pid, pipe.read)
        } catch {
            _ = close(pipe.read)
            throw error
        }
    }

    /// Reads the decoder's header, waiting for it at most `headerWait` (never on the daemon's
    /// loop: SoundServer reads it on a thread of its own). Throws why the file is not played: the
    /// decoder's own reason (`refused`), or that it died or said nothing (not `refused`).
    func readHeader() throws(HeaderError) {
        var header: [UInt8] = []
        let deadline = Self.milliseconds() + Int64(Self.headerWait)
        var atEnd = false
        func needed() -> Int {
            guard header.count >= 4 else { return 4 }
            if header.starts(with: Array("CHSD".utf8)) { return 20 }
            guard header.starts(with: Array("CHSE".utf8)) else { return 0 }
            guard header.count >= 8 else { return 8 }
            return 8 + min(4096, (0..<4).reduce(0) { $0 | Int(header[4 + $1]) << (8 * $1) })
        }
        while !atEnd, header.count < needed() {
            if let more = Self.readAvailable(fd, upTo: needed() - header.count) {
                if more.isEmpty { atEnd = true } else { header += more }
                continue
            }
            let left = deadline - Self.milliseconds()
            if left <= 0 { break }
            Self.poll(fd, milliseconds: Int32(left))
        }
        if header.starts(with: Array("CHSE".utf8)), header.count >= 8, header.count == needed() {
            end()
            throw HeaderError(message: String(decoding: header.dropFirst(8), as: UTF8.self), refused: true)
        }
        guard header.count >= 20, header.starts(with: Array("CHSD".utf8)) else {
            let ending = end()
            throw HeaderError(message: header.isEmpty && ending == nil
                ? "the decoder of \(path) said nothing within \(Self.headerWait) ms; not played"
                : "the decoder of \(path) stopped (\(ending.map(Self.describe) ?? "it wrote what it should not")); not played", refused: false)
        }
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(header[at + $1]) << (8 * $1) } }
        var count: UInt64 = 0
        for i in 0..<8 { count |= UInt64(header[12 + i]) << UInt64(8 * i) }
        let (channels, rate, frames) = (u32(4), u32(8), Int64(bitPattern: count))
        guard (1...SoundFile.channelLimit).contains(channels), (1...SoundFile.rateLimit).contains(rate), frames > 0 else {
            end()
            throw HeaderError(message: "the decoder of \(path) said what no sound is (\(channels) channels at \(rate) Hz); not played", refused: false)
        }
        self.channels = channels
        self.rate = rate
        self.frames = frames
        // And the first samples (they follow at once): the stream's first request is then met with
        // sound, not with the silence of a decoder not yet begun (heard as 70 ms of delay).
        Self.poll(fd, milliseconds: 100)
    }

    /// A decoder started ahead of need: it waits for one line on its standard input (`L` or `1`,
    /// a space, the path) and then decodes that file as any decoder does. The daemon keeps one
    /// (`SoundServer.keepSpareDecoder`), started again after each is taken.
    final class Spare: @unchecked Sendable {
        let pid: pid_t
        let input: Int32
        let output: Int32

        private init(pid: pid_t, input: Int32, output: Int32) {
            self.pid = pid
            self.input = input
            self.output = output
        }

        private static let waiting = Mutex<Spare?>(nil)
        nonisolated(unsafe) static var enabled = false

        /// The spare, if one waits (taken: the next is started at once, off the caller's way).
        static func take() -> Spare? {
            guard enabled else { return nil }
            let spare = waiting.withLock { $0.take() }
            DispatchQueue.global(qos: .utility).async { prepare() }
            return spare
        }

        /// Starts a spare unless one waits.
        static func prepare() {
            guard enabled, !decoder.isEmpty, waiting.withLock({ $0 == nil }), let input = try? Sys.pipe() else { return }
            defer { _ = close(input.read) }
            guard let started = try? DecodedSound.start(["-"], stdin: .descriptor(input.read)) else {
                _ = close(input.write)
                return
            }
            let spare = Spare(pid: started.pid, input: input.write, output: started.output)
            let kept = waiting.withLock { waiting -> Bool in
                guard waiting == nil else { return false }
                waiting = spare
                return true
            }
            if !kept { spare.discard() }
        }

        /// Gives it its file: whether it took it (a spare that died meanwhile did not).
        func hand(_ path: String, looping: Bool) -> Bool {
            let line = Array(((looping ? "L " : "1 ") + path + "\n").utf8)
            let written = line.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            _ = close(input)
            guard written == line.count else {
                _ = close(output)
                DecodedSound.stop(pid)
                return false
            }
            return true
        }

        /// Stops a spare not used.
        func discard() {
            _ = close(input)
            _ = close(output)
            DecodedSound.stop(pid)
        }

        /// Stops the spare that waits (the daemon stops).
        static func discardWaiting() {
            waiting.withLock { $0.take() }?.discard()
        }
    }

    struct HeaderError: Error {
        var message: String
        /// The decoder said why (a file that is no sound): not the decoder's own failure.
        var refused: Bool
    }

    /// Stops the decoder now (its reading end closed, it reaped): how it ended, if it had.
    @discardableResult
    private func end() -> Int32? {
        if fd >= 0 {
            _ = close(fd)
            fd = -1
        }
        guard reaped == nil else { return reaped }
        let status = Self.stop(pid)
        reaped = status ?? 0
        return status
    }

    deinit {
        if fd >= 0 { _ = close(fd) }
        if reaped == nil { Self.stop(pid) }
    }

    var seconds: Double { Double(frames) / Double(rate) }

    /// Waits up to `milliseconds` for the decoder to send something (or end): whether it did.
    func waitForSound(milliseconds: Int32) -> Bool {
        fd < 0 || Self.poll(fd, milliseconds: milliseconds)
    }

    /// Up to `count` frames into `buffer`: what the decoder has sent (a frame the pipe split is
    /// put together at once). When it has sent nothing at all, silence (the server keeps asking
    /// only while it is fed), counted: `stallLimit` of it in a row ends the sound. Never waits.
    func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int) -> DecodedRead {
        let frameBytes = channels * MemoryLayout<Float>.size
        let bytes = UnsafeMutableRawPointer(buffer)
        var filled = 0
        var ended = false
        while filled < count, fd >= 0 {
            if !partial.isEmpty {
                guard let more = Self.readAvailable(fd, upTo: frameBytes - partial.count) else { break }
                if more.isEmpty {
                    ended = true
                    break
                }
                partial += more
                if partial.count == frameBytes {
                    partial.withUnsafeBytes { (bytes + filled * frameBytes).copyMemory(from: $0.baseAddress!, byteCount: frameBytes) }
                    partial = []
                    filled += 1
                }
                continue
            }
            let got = Glibc.read(fd, bytes + filled * frameBytes, (count - filled) * frameBytes)
            if got > 0 {
                let whole = got / frameBytes
                let rest = got % frameBytes
                if rest > 0 {
                    partial = Array(UnsafeRawBufferPointer(start: bytes + (filled + whole) * frameBytes, count: rest))
                }
                filled += whole
                continue
            }
            if got == 0 {
                ended = true
                break
            }
            if errno == EINTR { continue }
            break  // EAGAIN: nothing more now
        }
        delivered += Int64(filled)
        if ended || fd < 0 {
            // The decoder closed its end: a clean exit ends the sound (a file played once, or a
            // damaged one, where it broke); a signal is a crash.
            let status = end()
            if let status, status & 0x7f != 0 {
                return .failed("the decoder of \(path) stopped (\(Self.describe(status)))")
            }
            return .end(filled)
        }
        if filled > 0 {
            starved = 0
            return .frames(filled)
        }
        // Nothing at all now: silence, counted.
        buffer.update(repeating: 0, count: count * channels)
        starved += count
        if Double(starved) / Double(rate) >= Self.stallLimit {
            end()
            return .failed("the decoder of \(path) gave nothing for \(Int(Self.stallLimit)) s; stopped")
        }
        return .frames(count)
    }

    // MARK: - The parts

    /// What the decoder finds in its environment: nothing of the daemon's but the search path.
    static var environment: [String: String] { ["PATH": "/usr/local/bin:/usr/bin:/bin"].merging(testEnvironment) { $1 } }

    static var testEnvironment: [String: String] {
        var kept: [String: String] = [:]
        #if DEBUG
        for name in ["CHIME_TEST_DECODER_CRASH", "CHIME_TEST_DECODER_HANG"] {
            if let value = Sys.environment(name) { kept[name] = value }
        }
        // A crash a test asks for is not one to explain: no backtracer (which may outlive the
        // crashed decoder and hold the test's output open: it once held `make test` for ten minutes).
        if kept["CHIME_TEST_DECODER_CRASH"] != nil { kept["SWIFT_BACKTRACE"] = "enable=no" }
        #endif
        return kept
    }

    static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Waits up to `milliseconds` for `fd` to be readable (or at its end).
    @discardableResult
    static func poll(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entries = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        return ((try? Sys.poll(&entries, timeout: milliseconds)) ?? 0) > 0
    }

    /// What is there now (empty at the end), or nil when nothing is (or the read failed).
    static func readAvailable(_ fd: Int32, upTo count: Int) -> [UInt8]? {
        guard count > 0 else { return nil }
        return (try? Sys.read(fd, upTo: count)) ?? nil
    }

    /// Stops the decoder (its group: it starts nothing, but a parser might) and reaps it; how it ended.
    @discardableResult
    static func stop(_ pid: pid_t) -> Int32? {
        if let status = try? Sys.reap(pid) { return status }
        _ = kill(-pid, SIGKILL)
        _ = kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return status & 0x7f == SIGKILL ? nil : status
    }

    static func describe(_ status: Int32) -> String {
        status & 0x7f == 0 ? "exit status \((status >> 8) & 0xff)" : "killed by signal \(status & 0x7f)"
    }
}

/// A whole file decoded as a playback decodes it (in the decoder's process), waiting for what it
/// sends since no server paces it: what the sound fuzz target and its tests check.
public struct DecodingOutcome: Sendable {
    /// Why it is not played (nothing decoded), or nil.
    public var refused: String?
    /// Frames of sound received, and the frames its header declared.
    public var frames = 0
    public var declared: Int64 = 0
    public var rate = 0
    /// How the decoder failed (it died, or stalled), or nil.
    public var failure: String?
}

public enum SoundDecoding {
    /// Decodes `path` once, to its end, a failure, or `frameLimit` frames; `stall` bounds each wait.
    public static func decodeAll(_ path: String, frameLimit: Int, stall: Int32 = 5000) -> DecodingOutcome {
        var outcome = DecodingOutcome()
        let sound: DecodedSound
        do {
            sound = try DecodedSound(path: path, looping: false)
            try sound.readHeader()
        } catch let error as SoundError {
            outcome.refused = error.message
            return outcome
        } catch let error as DecodedSound.HeaderError {
            if error.refused { outcome.refused = error.message } else { outcome.failure = error.message }
            return outcome
        } catch {
            outcome.failure = "\(error)"
            return outcome
        }
        outcome.declared = sound.frames
        outcome.rate = sound.rate
        var buffer = [Float](repeating: 0, count: 4096 * sound.channels)
        while outcome.frames < frameLimit {
            guard sound.waitForSound(milliseconds: stall) else {
                outcome.failure = "the decoder sent nothing for \(stall) ms"
                return outcome
            }
            // One frame at a time would be slow; ask for what fits, and count only what came (the
            // silence a read adds while the decoder is behind is not sound).
            let before = sound.received
            let read = buffer.withUnsafeMutableBufferPointer { sound.read(into: $0.baseAddress!, frames: 4096) }
            outcome.frames += Int(sound.received - before)
            switch read {
            case .frames: continue
            case .end: return outcome
            case .failed(let why):
                outcome.failure = why
                return outcome
            }
        }
        return outcome
    }
}

/// The decoder's side: what `chime daemon --decode-sound PATH [--loop]` runs.
public enum SoundDecoder {
    public static func run(path given: String, looping given_loop: Bool) -> Int32 {
        signal(SIGPIPE, SIG_DFL)
        var path = given
        var looping = given_loop
        if given == "-" {
            // A spare: its file comes on standard input, one line (what waits until then is the
            // program's start and the libraries' loading, done ahead).
            _ = Libraries.loaded
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while line.count <= 8192, read(0, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
            guard line.count >= 3, line.count <= 8192, line[1] == UInt8(ascii: " ") else { return 2 }
            looping = line[0] == UInt8(ascii: "L")
            path = String(decoding: line.dropFirst(2), as: UTF8.self)
        }
        let file: SoundFile
        do { file = try SoundFile(path: path) } catch {
            var bytes = Array("CHSE".utf8)
            let message = Array(error.message.utf8.prefix(4096))
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: message.count >> shift)) }
            bytes += message
            writeAll(bytes)
            return 1
        }
        var header = Array("CHSD".utf8)
        for value in [UInt32(file.channels), UInt32(file.rate)] {
            for shift in stride(from: 0, to: 32, by: 8) { header.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        for shift in stride(from: 0, to: 64, by: 8) { header.append(UInt8(truncatingIfNeeded: UInt64(file.frames) >> UInt64(shift))) }
        writeAll(header)
        let chunk = 4096
        var samples = [Float](repeating: 0, count: chunk * file.channels)
        var sent = 0
        while true {
            let got = samples.withUnsafeMutableBufferPointer { file.read(into: $0.baseAddress!, frames: chunk, looping: looping) }
            samples.withUnsafeBytes { writeAll(Array($0.prefix(got * file.channels * MemoryLayout<Float>.size))) }
            sent += got
            testFault(path: path, sent: sent, rate: file.rate)
            if got < chunk { return 0 }
        }
    }

    static func writeAll(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                exit(0)  // the player is gone: nothing more to decode for
            }
            offset += written
        }
    }

    /// Test builds only: a decoder that crashes, or hangs, a moment into the sound (standing in for
    /// a parser's bug on a hostile file). Release builds have no such switch.
    static func testFault(path: String, sent: Int, rate: Int) {
        #if DEBUG
        guard sent >= rate / 4 else { return }
        if Sys.environment("CHIME_TEST_DECODER_CRASH") == path { fatalError("CHIME_TEST_DECODER_CRASH: crashing while decoding \(path)") }
        if Sys.environment("CHIME_TEST_DECODER_HANG") == path { while true { sleep(60) } }
        #endif
    }
}
