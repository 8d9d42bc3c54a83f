import Foundation
import Posix
@testable import Sound
import Testing
import TestSupport

/// chime's player on its own, against a real PulseAudio with a null sink: what it refuses, how a
/// sound that plays once ends, and what happens with no server. One test at a time, in a process
/// of its own (make test runs it beside the daemon's sound suites): libpulse reads `PULSE_SERVER`
/// from this process's environment, and the decoder's faults are switched on through it too.
@Suite(.serialized) final class PlaybackTests {
    var pulse: PulseAudioSession?
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("chime-sound")
        // Files are decoded by chime's own decoder, a process of its own, as the daemon has them.
        // (The test build's: its decoder obeys the CHIME_TEST_DECODER_ faults.)
        SoundServer.decoder = [testBuildChimePath(), "daemon"]
    }

    deinit {
        pulse?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Points libpulse (read when a context is made) at a server of the test's own.
    func startServer() throws -> PulseAudioSession {
        let session = try PulseAudioSession()
        pulse = session
        setenv("PULSE_SERVER", session.address, 1)
        return session
    }

    /// A 480 Hz tone (100 samples a period at 48 kHz) lasting `seconds`, amplitude 0.5.
    func tone(seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("tone.wav").path
        try writeWAV((0..<Int(seconds * 48_000)).map { Float(0.5 * sin(2 * Double.pi * Double($0) / 100)) }, rate: 48_000, to: path)
        return path
    }

    func nextEvent(_ server: SoundServer, timeout: Double = 30, _ match: (SoundEvent) -> Bool) -> SoundEvent? {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var fds = [pollfd(fd: server.wakeup.fd, events: Int16(POLLIN), revents: 0)]
            _ = try? Sys.poll(&fds, timeout: 50)
            for event in server.takeEvents() where match(event) { return event }
        }
        return nil
    }

    func isConnected(_ event: SoundEvent) -> Bool { if case .connected = event { true } else { false } }

    /// What cannot be played is refused with a reason: no file, a directory, a FIFO (which would
    /// block the reading thread), an empty file, bytes that are no sound.
    @Test func whatCannotBePlayedIsRefusedWithAReason() throws {
        _ = try startServer()
        let server = try SoundServer(applicationName: "chime-test")
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let empty = directory.appendingPathComponent("empty.wav").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let garbage = directory.appendingPathComponent("garbage.ogg").path
        _ = FileManager.default.createFile(atPath: garbage, contents: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        let header = directory.appendingPathComponent("header-only.wav").path
        try writeWAV([], rate: 48_000, to: header)
        let linkToFifo = directory.appendingPathComponent("fifo-link.wav").path
        try FileManager.default.createSymbolicLink(atPath: linkToFifo, withDestinationPath: fifo)
        let cases: [(String, String)] = [
            (directory.appendingPathComponent("missing.wav").path, "no sound file"),
            (directory.path, "not a regular file"),
            (fifo, "not a regular file"),
            (linkToFifo, "not a regular file"),
            ("/dev/zero", "not a regular file"),
            (empty, "cannot decode"),
            (garbage, "cannot decode"),
            (header, "holds no sound"),
        ]
        // The decoder (a process of its own) says why; the play ends `failed` with it (its caller
        // then tries a player program), and the caller never waits on the decoder.
        for (path, expected) in cases {
            let id = try server.play(path, PlaybackOptions())
            guard case .ended(id, .failed(let why))? = nextEvent(server, { if case .ended = $0 { true } else { false } }) else {
                Issue.record("\(path): no refusal")
                continue
            }
            #expect(why.contains(expected), "\(path): \(why)")
        }
    }

    /// A link flipped between a sound and a FIFO while sounds are asked for (it once won the race
    /// on the 23rd try and held the daemon in `open` for good): every play answers, with the sound
    /// or a refusal, and none waits on the FIFO.
    @Test func aLinkFlippedToAFifoNeverHoldsAPlay() throws {
        _ = try startServer()
        let server = try SoundServer(applicationName: "chime-test")
        let wav = try tone(seconds: 0.05)
        let fifo = directory.appendingPathComponent("flip-fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let link = directory.appendingPathComponent("flip.wav").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: wav)
        let stop = ManagedAtomicFlag()
        let flipper = Thread {
            var toFifo = true
            while !stop.isSet {
                let next = link + ".next"
                unlink(next)
                symlink(toFifo ? fifo : wav, next)
                rename(next, link)
                toFifo.toggle()
            }
        }
        flipper.start()
        defer { stop.set() }
        let done = DispatchSemaphore(value: 0)
        // The file is opened (as a play opens it) and let go: what is tried is the opening, not
        // 200 plays started and stopped against the sound server.
        _ = server
        let answered = LockedCount()
        let player = Thread {
            for _ in 0..<200 {
                _ = try? SoundFile(path: link)
                answered.add()
            }
            done.signal()
        }
        player.start()
        #expect(done.wait(timeout: .now() + 60) == .success, "a play was held (\(answered.value) of 200 answered)")
        #expect(answered.value == 200)
    }

    /// A sound that plays once ends by itself, `finished`, after playing for its length.
    @Test func aSoundPlayedOnceEndsFinished() throws {
        let session = try startServer()
        let file = try tone(seconds: 0.3)
        let recording = try session.record()
        defer { recording.stop() }
        let server = try SoundServer(applicationName: "chime-test")
        #expect(nextEvent(server, isConnected) != nil)
        let asked = monotonicSeconds()
        let id = try server.play(file, PlaybackOptions())
        #expect(nextEvent(server) { if case .ended = $0 { true } else { false } } == .ended(id, .finished))
        let recorded = recording.waitForQuiet(after: asked, threshold: 0.01)
        let samples = recorded.samples
        let from = recorded.firstIndex(after: asked)
        let first = try #require(samples[from...].firstIndex { abs($0) > 0.01 })
        let last = try #require(samples.lastIndex { abs($0) > 0.01 })
        // What sounded: from the first sample heard to the last, less any silence inside (a sink
        // that runs dry for a moment on a busy machine plays silence there; once, beside the
        // packaging tests, first to last measured 240 frames over the tone's length). The tone itself
        // is quiet for one sample in fifty, where it crosses zero. Within 240 frames (5 ms) of its
        // 14,400.
        var silence = 0
        var quiet = 0
        for sample in samples[first...last] {
            if abs(sample) > 0.01 {
                if quiet >= 8 { silence += quiet }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        let sounded = last - first - silence
        #expect(abs(sounded - 14_400) <= 240, "\(sounded) frames sounded, and \(silence) of silence inside")
    }

    /// Decoded whole (as the sound fuzz target does), a file gives the frames its header declares;
    /// what is no sound is refused with the decoder's reason.
    @Test func aWholeFileDecodesToItsDeclaredLength() throws {
        let outcome = SoundDecoding.decodeAll(try tone(seconds: 0.3), frameLimit: 1 << 20)
        #expect(outcome.refused == nil)
        #expect(outcome.failure == nil)
        #expect(outcome.declared == 14_400)
        #expect(outcome.frames == 14_400)
        let junk = directory.appendingPathComponent("junk.wav").path
        try Data("not a sound".utf8).write(to: URL(fileURLWithPath: junk))
        let refused = SoundDecoding.decodeAll(junk, frameLimit: 1 << 20)
        #expect(refused.refused?.contains("cannot decode \(junk)") == true, "\(refused)")
    }

    /// A looping 5 s tone whose decoder has `fault` (a test build's switch, read by the decoder
    /// when it starts): the server it played on, and why the sound ended `undecodable` (nil: it
    /// did not end so within `timeout`).
    func undecodable(fault: String, timeout: Double) throws -> (server: SoundServer, file: String, why: String?) {
        _ = try startServer()
        let file = try tone(seconds: 5)
        setenv(fault, file, 1)
        defer { unsetenv(fault) }
        let server = try SoundServer(applicationName: "chime-test")
        #expect(nextEvent(server, isConnected) != nil)
        let id = try server.play(file, PlaybackOptions(looping: true))
        guard case .ended(id, .undecodable(let why))? = nextEvent(server, timeout: timeout, { if case .ended = $0 { true } else { false } }) else {
            return (server, file, nil)
        }
        return (server, file, why)
    }

    /// A file that crashes its decoder (a process of its own) ends its sound `undecodable`, with
    /// the signal, and only it: this process, the player, lives, and the next sound plays.
    @Test func aDecoderThatCrashesEndsItsSoundAlone() throws {
        let (server, file, ending) = try undecodable(fault: "CHIME_TEST_DECODER_CRASH", timeout: 10)
        let why = try #require(ending, "the sound did not end undecodable")
        #expect(why.contains("the decoder of \(file) stopped (killed by signal"), "\(why)")
        let next = try server.play(try tone(seconds: 0.2), PlaybackOptions())
        #expect(nextEvent(server) { if case .ended = $0 { true } else { false } } == .ended(next, .finished))
    }

    /// A decoder that hangs a moment into the sound is heard as silence, then, after
    /// `DecodedSound.stallLimit` of it, ends the sound `undecodable`; nothing waits on it.
    @Test func aDecoderThatHangsEndsItsSoundAfterTheStallLimit() throws {
        let why = try #require(try undecodable(fault: "CHIME_TEST_DECODER_HANG", timeout: 20).why, "the sound did not end undecodable")
        #expect(why.contains("gave nothing for 2 s"), "\(why)")
    }

    /// Each play says which output it sounds on, with its mute and volume.
    @Test func aPlaySaysItsOutput() throws {
        let session = try startServer()
        try session.setSink(muted: true, percent: 25)
        let server = try SoundServer(applicationName: "chime-test")
        let id = try server.play(try tone(seconds: 0.5), PlaybackOptions(looping: true))
        guard case .playingOn(id, let output)? = nextEvent(server, { if case .playingOn = $0 { true } else { false } }) else {
            Issue.record("no output reported")
            return
        }
        #expect(output.sink == session.sink)
        #expect(output.muted)
        #expect(output.percent == 25)
        #expect(output.isSilent)
        server.stop(id)
        #expect(nextEvent(server) { if case .ended = $0 { true } else { false } } == .ended(id, .stopped))
    }

    /// A stop whose ramp is written late (libpulse's thread held between the server's report of its
    /// read position and the write, as a busy machine holds it, while the server reads on) still
    /// ends in a ramp, not a jump: the rewritten samples land where they were first written.
    /// Before the write was placed by absolute position, a 0.3 s step (the tone's full level)
    /// came in one Dismiss of three on a loaded machine, and at every held stop here.
    @Test func aStopWrittenLateStillRampsToSilence() throws {
        let session = try startServer()
        let file = try tone(seconds: 0.5)
        let recording = try session.record()
        defer {
            recording.stop()
            Playback.holdBeforeRampForTests = 0
        }
        let server = try SoundServer(applicationName: "chime-test")
        #expect(nextEvent(server, isConnected) != nil)
        let smoothStep = 0.5 * 2 * Double.pi / 100  // the tone's largest step between two samples
        for hold: UInt32 in [0, 7_000, 23_000, 41_000] {
            let asked = monotonicSeconds()
            let id = try server.play(file, PlaybackOptions(looping: true))
            // Playing: a fifth of a second of the tone has reached the sink's monitor.
            let playing = recording.waitForSound(after: asked, threshold: 0.001, length: 9_600)
            #expect(playing.samples(after: asked).firstIndex { abs($0) > 0.001 } != nil, "hold \(hold) µs: the tone was not heard")
            Playback.holdBeforeRampForTests = hold
            let stopped = monotonicSeconds()
            server.stop(id)
            #expect(nextEvent(server) { if case .ended = $0 { true } else { false } } == .ended(id, .stopped))
            Playback.holdBeforeRampForTests = 0
            // Quiet, and the monitor has a tenth of a second of the silence after it.
            let recorded = recording.waitForQuiet(after: asked, threshold: 0.001)
            let samples = recorded.samples
            let heard = try #require(recorded.samples(after: asked).firstIndex { abs($0) > 0.001 })
            let last = try #require(samples.lastIndex { abs($0) > 0.001 })
            guard samples.count >= last + 4_800, recorded.arrival(of: last) > stopped else {
                Issue.record("hold \(hold) µs: no silence after the stop")
                continue
            }
            // From a tenth of a second into the tone (its first samples are not what is checked:
            // the sink starts a stream where it can) to after the last sound.
            let from = max(heard + 4_800, last - 9_600)
            guard from < last else {
                Issue.record("hold \(hold) µs: the tone stopped \(last - heard) samples after it was first heard")
                continue
            }
            var largest = 0.0
            var at = from
            for i in from..<(last + 480) where Double(abs(samples[i] - samples[i - 1])) > largest {
                largest = Double(abs(samples[i] - samples[i - 1]))
                at = i
            }
            #expect(largest < smoothStep * 1.05, "hold \(hold) µs: a click of \(largest) at \(at - last) samples from the last sound")
        }
    }

    /// No server: the connection is said to be unavailable, and a sound asked for ends `failed`
    /// (its caller then plays it another way). Nothing is started: no autospawn.
    @Test func noServerEndsItsSoundsFailed() throws {
        setenv("PULSE_SERVER", "unix:\(directory.path)/no-such-socket", 1)
        let server = try SoundServer(applicationName: "chime-test")
        #expect(nextEvent(server) { if case .unavailable = $0 { true } else { false } } != nil)
        let id = try server.play(try tone(seconds: 0.2), PlaybackOptions())
        guard case .ended(id, .failed(let why))? = nextEvent(server, { if case .ended = $0 { true } else { false } }) else {
            Issue.record("the sound did not end")
            return
        }
        #expect(why.contains("sound server"), "\(why)")
    }

    /// A server let go while its sounds play (the daemon stopping mid-ring) ends them and its thread
    /// cleanly, and the sink goes quiet.
    @Test func lettingTheServerGoWhileItPlaysEndsItsSounds() throws {
        let session = try startServer()
        let file = try tone(seconds: 0.5)
        do {
            let server = try SoundServer(applicationName: "chime-test")
            #expect(nextEvent(server, isConnected) != nil)
            let first = try server.play(file, PlaybackOptions(looping: true))
            _ = try server.play(file, PlaybackOptions(volume: 50, fade: 2, looping: true))
            #expect(nextEvent(server) { $0 == .started(first) } != nil)
        }
        // Only the silence keeps playing.
        #expect(waitUntil { (try? session.streams()) == 1 }, "\((try? session.streams()) ?? -1) streams")
    }

    /// WAV, FLAC, Ogg Vorbis, Opus and MP3 (made by sox, opusenc and lame from one 0.3 s tone) each
    /// play through to their end, as long as the tone (within what each encoder adds).
    @Test func everyFormatAnAlarmMayUsePlays() throws {
        let session = try startServer()
        let wav = directory.appendingPathComponent("tone.wav").path
        let made = try runProgram(ChildProcess.whichProgram("sox"), ["-n", "-r", "48000", "-c", "1", "-b", "16", wav, "synth", "0.3", "sine", "480"]
            .map { Array($0.utf8) }, environment: ProcessInfo.processInfo.environment)
        #expect(made.status == 0, "\(made.stderr)")
        var files = [wav]
        for (program, arguments, name) in [("sox", [wav], "tone.flac"), ("sox", [wav], "tone.ogg"),
                                           ("opusenc", ["--quiet", wav], "tone.opus"), ("lame", ["--quiet", wav], "tone.mp3")] {
            let path = directory.appendingPathComponent(name).path
            let result = try runProgram(ChildProcess.whichProgram(program), (arguments + [path]).map { Array($0.utf8) },
                                        environment: ProcessInfo.processInfo.environment)
            #expect(result.status == 0, "\(program): \(result.stderr)")
            files.append(path)
        }
        let recording = try session.record()
        defer { recording.stop() }
        let server = try SoundServer(applicationName: "chime-test")
        #expect(nextEvent(server, isConnected) != nil)
        for file in files {
            let asked = monotonicSeconds()
            let id = try server.play(file, PlaybackOptions())
            #expect(nextEvent(server) { if case .ended = $0 { true } else { false } } == .ended(id, .finished), "\(file)")
            let recorded = recording.waitForQuiet(after: asked, threshold: 0.05)
            let samples = recorded.samples
            let from = recorded.firstIndex(after: asked)
            let first = try #require(samples[from...].firstIndex { abs($0) > 0.05 }, "\(file): nothing was heard")
            let last = try #require(samples.lastIndex { abs($0) > 0.05 })
            let seconds = Double(last - first) / 48_000
            #expect(abs(seconds - 0.3) <= 0.06, "\(file) sounded \(seconds) s")
        }
    }
}

/// A flag one thread sets and another reads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// A count one thread adds to and another reads.
final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
