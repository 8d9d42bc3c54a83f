import ChimeCenter
import DBus
import Foundation
import Testing
import TestSupport
import Timekeeping

/// chime plays an alarm's sound itself: the real daemon, a real PulseAudio with a null sink whose
/// monitor is recorded, and a recording notification server to answer the popup. What is checked is
/// what reached the sink: the level over time, the samples at loop points, when it went quiet.
@Suite(.serialized) struct AlarmSoundTests: OnAPrivateBus {
    let bus: PrivateBus
    let pulse: PulseAudioSession

    init() throws {
        bus = try PrivateBus()
        pulse = try PulseAudioSession()
    }

    static let rate = PulseAudioSession.rate
    /// The test tone's amplitude (a 480 Hz sine: exactly 100 samples a period at 48 kHz).
    static let amplitude: Float = 0.5
    /// The largest step between two samples of the tone at full volume: anything above it is a click.
    static let smoothStep = Double(amplitude) * 2 * Double.pi / 100

    /// A file of the tone lasting `periods` periods (each 1/480 s), so it loops without a seam of its own.
    func tone(periods: Int, name: String = "tone.wav") throws -> String {
        let path = bus.directory.appendingPathComponent(name).path
        try writeWAV((0..<periods * 100).map { Self.amplitude * Float(sin(2 * Double.pi * Double($0) / 100)) }, rate: Self.rate, to: path)
        return path
    }

    func daemon(_ extra: [String: String] = [:]) throws -> DaemonProcess {
        try DaemonProcess(bus: bus, stateDirectory: state, environment: pulse.environment.merging(extra) { $1 })
    }

    func set(_ arguments: [String]) throws {
        let result = try runChime(arguments, environment: bus.environment())
        try #require(result.status == 0, "\(result.stderr)")
    }

    /// Waits until the daemon is connected to the sound server (its status says so).
    func waitForSoundServer() throws {
        let connected = try waitUntil { try center().daemonStatus().sound.contains("through the sound server") }
        try #require(connected, "the daemon did not connect to the sound server: \((try? center().daemonStatus().sound) ?? "")")
    }

    /// A recording notification server, the daemon connected to this test's sound server, and the
    /// sink's recording: what most of these tests ring against.
    func session() throws -> (RecordingServer, DaemonProcess, MonitorRecording) {
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon()
        let recording = try pulse.record()
        try waitForSoundServer()
        return (recorder, daemon, recording)
    }

    /// Stops what `session` started, and the sound server and bus.
    func stop(_ recorder: RecordingServer, _ daemon: DaemonProcess, _ recording: MonitorRecording) {
        recording.stop()
        daemon.stop()
        recorder.stop()
        pulse.stop()
        bus.stop()
    }

    /// The notification server's id of the popup alarm `identifier` shows.
    func popup(of identifier: String) throws -> UInt32? {
        try center().deliveredNotifications().first { $0.identifier == identifier }?.serverID
    }

    /// The sink's state, for messages.
    var sinkText: String { (try? pulse.sinkState()).map { "muted \($0.muted), \($0.percent)%" } ?? "unknown" }

    /// The RMS level of each `window`-sample window from `start`, `count` of them.
    func levels(_ samples: [Float], from start: Int, window: Int, count: Int) -> [Double] {
        (0..<count).map { rms(samples, start + $0 * window..<start + ($0 + 1) * window) }
    }

    /// The first sample from `start` louder than `threshold`.
    func onset(_ samples: [Float], from start: Int, threshold: Float = 0.002) -> Int? {
        samples[min(start, samples.count)...].firstIndex { abs($0) > threshold }
    }

    /// The level rises along the fade's curve (cubic: even in the percent a person sees) and stays
    /// at the requested volume: 70% on the server's scale is 0.7³ of the file's amplitude.
    @Test func theSoundFadesInToItsVolume() throws {
        let file = try tone(periods: 480)  // 1 s
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        let asked = monotonicSeconds()
        try set(["in", "1s", "--sound", file, "--volume", "70", "--fade", "2s", "--ring", "6s", "--id", "fade", "Fade"])
        #expect(recorder.waitForCalls(1).count == 1)
        #expect(recorder.calls.first?.hints["suppress-sound"] == .boolean(true), "chime plays it: the server is asked not to")
        // The fade and half a second after it (and the curve's 3.3 s from before the onset) recorded.
        let recorded = recording.waitForSound(after: asked, threshold: 0.002, length: 16 * Self.rate / 5, timeout: 20)
        let samples = recorded.samples
        let from = recorded.firstIndex(after: asked)
        let window = Self.rate / 100  // 10 ms
        let start = try #require(onset(samples, from: from), "nothing was heard: \(daemon.log)")
        let curve = levels(samples, from: max(from, start - 30 * window), window: window, count: 330)
        let full = Double(Self.amplitude) / 2.squareRoot() * pow(0.7, 3)
        // Aligned where the level is half the full one: (t/T)³ = 1/2 at t = 0.794 T.
        let half = try #require(curve.firstIndex { $0 >= full / 2 })
        var worst = 0.0
        for (index, level) in curve.enumerated() {
            let t = (Double(index - half) * 0.01 + 0.005) / 2 + pow(0.5, 1.0 / 3)
            let expected = full * pow(min(1, max(0, t)), 3)
            worst = max(worst, abs(level - expected))
        }
        print("measured: fade 2 s to 70%: largest departure from the curve \(String(format: "%.4f", worst)) (full level \(String(format: "%.4f", full)))")
        #expect(worst < 0.06 * full, "the level does not follow the fade's curve")
        // Measured over whole periods of the tone (48 in 100 ms).
        let steady = levels(samples, from: start + 2 * Self.rate + 10 * window, window: 10 * window, count: 5)
        #expect(steady.count == 5 && steady.allSatisfy { abs($0 - full) < 0.01 * full }, "the level after the fade is not 70%: \(steady) vs \(full)")
    }

    /// A fade from a starting level (`--fade-from 50%`) is heard at once, at that level on the
    /// server's cubic scale (0.5³ of the full level), and rises along the same curve to the volume.
    @Test func aFadeStartsFromItsLevel() throws {
        let file = try tone(periods: 480)  // 1 s
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        let asked = monotonicSeconds()
        try set(["in", "1s", "--sound", file, "--fade", "2s", "--fade-from", "50%", "--ring", "5s", "--id", "soft", "Soft"])
        #expect(recorder.waitForCalls(1).count == 1)
        let recorded = recording.waitForSound(after: asked, threshold: 0.002, length: 3 * Self.rate, timeout: 20)
        let samples = recorded.samples
        let start = try #require(onset(samples, from: recorded.firstIndex(after: asked)), "nothing was heard: \(daemon.log)")
        try #require(samples.count >= start + 3 * Self.rate, "3 s of the ring were not recorded")
        let full = Double(Self.amplitude) / 2.squareRoot()
        // Whole periods of the tone (48 in 100 ms), past the stream's first samples.
        let level = { (seconds: Double) -> Double in
            let from = start + Int(seconds * Double(Self.rate))
            return rms(samples, from..<from + Self.rate / 10)
        }
        let measured = [0.02, 0.95, 2.4].map(level)
        print("measured: fade from 50% over 2 s: \(measured.map { String(format: "%.3f", $0 / full) }) of the full level")
        // At the start about 0.5³ (the first 100 ms rise a little: 0.125 to 0.15); half-way (1 s)
        // 0.75³ = 0.42; after it, full.
        #expect(measured[0] > 0.11 * full && measured[0] < 0.17 * full, "the start: \(measured[0] / full) of the full level")
        #expect(abs(measured[1] - 0.4219 * full) < 0.04 * full, "half-way: \(measured[1] / full) of the full level")
        #expect(abs(measured[2] - full) < 0.02 * full, "after the fade: \(measured[2] / full) of the full level")
    }

    /// A looping sound has no gap and no click where it starts again: the step between any two
    /// samples stays that of the tone, and no 5 ms goes quiet, over a dozen loop points.
    @Test func theLoopHasNoSeam() throws {
        let file = try tone(periods: 120)  // 0.25 s
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        let asked = monotonicSeconds()
        try set(["in", "1s", "--sound", file, "--ring", "4s", "--id", "loop", "Loop"])
        #expect(recorder.waitForCalls(1).count == 1)
        let recorded = recording.waitForSound(after: asked, threshold: 0.002, length: 3 * Self.rate + 1, timeout: 20)
        let samples = recorded.samples
        let start = try #require(onset(samples, from: recorded.firstIndex(after: asked)), "nothing was heard: \(daemon.log)")
        let body = (start + Self.rate / 20)..<(start + 3 * Self.rate)  // 2.95 s: 11 loop points
        try #require(body.upperBound < samples.count, "3 s of the ring were not recorded")
        var largestStep = 0.0
        for i in body { largestStep = max(largestStep, Double(abs(samples[i] - samples[i - 1]))) }
        let quietest = stride(from: body.lowerBound, to: body.upperBound - 240, by: 240).map { rms(samples, $0..<$0 + 240) }.min() ?? 0
        print("measured: loop of a 0.25 s tone over 2.95 s: largest step \(String(format: "%.4f", largestStep)) (the tone's own \(String(format: "%.4f", Self.smoothStep))), quietest 5 ms \(String(format: "%.3f", quietest))")
        #expect(largestStep < Self.smoothStep * 1.05, "a click or a gap at a loop point")
        #expect(quietest > 0.3, "a gap: some 5 ms went quiet")
    }

    /// Dismiss silences the sound within 20 ms, with a ramp rather than a click.
    @Test func dismissSilencesItWithin20Milliseconds() throws {
        let file = try tone(periods: 480)
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        var measured: [Double] = []
        for round in 0..<5 {
            let asked = monotonicSeconds()
            try set(["in", "1s", "--sound", file, "--id", "stop-\(round)", "Stop"])
            let id = try #require(recorder.waitForCalls(round + 1).last.map { _ in
                try popup(of: "stop-\(round)")
            } ?? nil)
            // It rings: a fifth of a second of it has reached the sink's monitor.
            let ringing = recording.waitForSound(after: asked, threshold: 0.01, length: Self.rate / 5)
            try #require(ringing.samples(after: asked).contains { abs($0) > 0.01 }, "round \(round): it did not ring")
            let pressed = monotonicSeconds()
            try recorder.invokeAction(id: id, key: "dismiss")
            let recorded = recording.waitForQuiet(after: pressed, threshold: 0.01)
            let samples = recorded.samples
            let from = recorded.firstIndex(after: asked)
            let pressIndex = recorded.firstIndex(after: pressed)
            let last = try #require(samples[from...].lastIndex { abs($0) > 0.01 })
            let quietAfter = recorded.arrival(of: last) - pressed
            measured.append(quietAfter)
            var largestStep = 0.0
            let window = max(from + 1, pressIndex - Self.rate / 10)..<max(from + 1, min(samples.count, last + 480))
            for i in window {
                largestStep = max(largestStep, Double(abs(samples[i] - samples[i - 1])))
            }
            #expect(largestStep < Self.smoothStep * 1.05, "a click when it stopped (step \(largestStep))")
            #expect(last > pressIndex - Self.rate / 10, "it did not sound until the answer")
        }
        measured.sort()
        print("measured: quiet after Dismiss (last sound's arrival at the monitor): \(measured.map { "\(Int($0 * 1000)) ms" }.joined(separator: ", "))")
        // Quiet at the answer (a short ramp, no click), not at the sound's end: the bounds leave room
        // for a busy machine; the printed figures are what this run measured.
        #expect(measured[measured.count / 2] <= 0.100, "the median stop took \(measured[measured.count / 2]) s")
        #expect(measured.last! <= 0.300)
    }

    /// An alarm that insists is heard on a muted, turned-down output: it is unmuted and raised for
    /// the ring and put back exactly after the answer.
    @Test func insistUnmutesForTheRingAndPutsItBack() throws {
        let file = try tone(periods: 480)
        try pulse.setSink(muted: true, percent: 30)
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        let asked = monotonicSeconds()
        try set(["in", "1s", "--sound", file, "--insist", "--id", "insist", "Insist"])
        _ = recorder.waitForCalls(1)
        #expect(try waitUntil { try pulse.sinkState() == (false, 100) }, "not unmuted and raised: \(sinkText)")
        let heard = recording.hears(after: asked, above: 0.1)
        #expect(heard, "the muted output did not sound")
        let id = try #require(try popup(of: "insist"))
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try pulse.sinkState() == (true, 30) }, "not put back: \(sinkText)")
        #expect(daemon.log.contains("is put back"))
    }

    /// Put back also when the daemon was killed mid-ring: the next daemon does it at start.
    @Test func insistPutsTheOutputBackAfterKillNine() throws {
        let file = try tone(periods: 480)
        try pulse.setSink(muted: true, percent: 40)
        let recorder = try RecordingServer(address: bus.address)
        let first = try daemon()
        defer { recorder.stop(); pulse.stop(); bus.stop() }
        try waitForSoundServer()
        try set(["in", "1s", "--sound", file, "--insist", "--ring", "2s", "--id", "killed", "Killed"])
        _ = recorder.waitForCalls(1)
        #expect(try waitUntil { try pulse.sinkState() == (false, 100) })
        first.kill()
        usleep(2_500_000)  // its ring time ends while no daemon runs
        #expect(try pulse.sinkState() == (false, 100), "nobody put it back yet")
        let second = try daemon()
        defer { second.stop() }
        #expect(try waitUntil(30) { try pulse.sinkState() == (true, 40) }, "the next daemon did not put it back: \(sinkText)\n\(second.log)")
    }

    /// Put back also when resuming the ring crashed the next daemon (a test build's switch stands in
    /// for a crash in its sound's decoder): the daemon after it puts the output back first, and
    /// does not resume that ring.
    @Test func insistPutsTheOutputBackWhenResumingTheRingCrashedTheDaemon() throws {
        let file = try tone(periods: 480)
        try pulse.setSink(muted: true, percent: 40)
        let recorder = try RecordingServer(address: bus.address)
        let first = try daemon()
        defer { recorder.stop(); pulse.stop(); bus.stop() }
        try waitForSoundServer()
        try set(["in", "1s", "--sound", file, "--insist", "--ring", "60s", "--id", "crashy", "Crashy"])
        _ = recorder.waitForCalls(1)
        #expect(try waitUntil { try pulse.sinkState() == (false, 100) })
        first.kill()
        let crashing = try DaemonProcess(bus: bus, stateDirectory: state, waitForName: false,
                                         environment: pulse.environment.merging(["CHIME_TEST_CRASH_READING": "the ring of crashy"]) { $1 })
        #expect(crashing.waitForExit(), "\(crashing.log)")
        let third = try daemon()
        defer { third.stop() }
        #expect(try waitUntil(30) { try pulse.sinkState() == (true, 40) }, "the output was not put back: \(sinkText)\n\(third.log)")
        #expect(third.log.contains("not rung again after a restart"), "\(third.log)")
        usleep(1_000_000)
        #expect(try pulse.sinkState() == (true, 40), "the ring did not resume and raise it again: \(sinkText)")
    }

    /// A sound file whose decoder crashes (a test build's switch stands in for a parser's bug on a
    /// hostile file; the decoder is a process of its own) ends that sound with why: the ring goes
    /// on with the default sound, the daemon lives, and the output `insist` raised is put back.
    @Test func aSoundThatCrashesItsDecoderRingsOnWithTheDefaultSound() throws {
        let file = try tone(periods: 4800)
        try pulse.setSink(muted: true, percent: 30)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon(["CHIME_TEST_DECODER_CRASH": file])
        let recording = try pulse.record()
        defer { stop(recorder, daemon, recording) }
        try waitForSoundServer()
        try set(["in", "1s", "--sound", file, "--insist", "--id", "crashy", "Crashy"])
        _ = recorder.waitForCalls(1)
        #expect(waitUntil { daemon.log.contains("the decoder of \(file) stopped (killed by signal") }, "\(daemon.log)")
        let crashed = monotonicSeconds()
        // The tone's decoder died a quarter second in; what sounds from here on is the default sound.
        #expect(recording.hears(after: crashed + 0.5, above: 0.05),
                "nothing rang after the decoder died: \(sinkText)\n\(daemon.log)")
        #expect(daemon.isRunning)
        let id = try #require(try popup(of: "crashy"))
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(try waitUntil { try pulse.sinkState() == (true, 30) }, "not put back: \(sinkText)")
    }

    /// A person who changes the output during the ring keeps their choice.
    @Test func anOutputChangedDuringTheRingIsLeftAsItIs() throws {
        let file = try tone(periods: 480)
        try pulse.setSink(muted: true, percent: 30)
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        try set(["in", "1s", "--sound", file, "--insist", "--id", "changed", "Changed"])
        _ = recorder.waitForCalls(1)
        #expect(try waitUntil { try pulse.sinkState() == (false, 100) })
        try pulse.setSink(muted: false, percent: 55)
        let id = try #require(try popup(of: "changed"))
        try recorder.invokeAction(id: id, key: "dismiss")
        #expect(waitUntil { daemon.log.contains("changed during the ring") })
        #expect(try pulse.sinkState() == (false, 55))
    }

    /// Without insist, a ring into a muted output says so: in its popup (sent again in place) and
    /// in the missed list.
    @Test func aRingIntoAMutedOutputSaysSo() throws {
        let file = try tone(periods: 480)
        try pulse.setSink(muted: true, percent: 100)
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        try set(["in", "1s", "--sound", file, "--id", "muted", "Muted"])
        let calls = recorder.waitForCalls(2)
        #expect(calls.count == 2)
        if calls.count == 2 {
            #expect(calls[1].replacesID != 0, "sent again in place")
            #expect(calls[1].body.contains("Rang muted"), "\(calls[1].body)")
        }
        let missed = try center().missedOccurrences().first { $0.identifier == "muted" }
        #expect(missed?.reason?.contains("rang muted") == true, "\(String(describing: missed))")
        let listed = try runChime(["list", "--missed"], environment: bus.environment())
        #expect(listed.stdout.contains("rang muted"), "\(listed.stdout)")
        #expect(try pulse.sinkState() == (true, 100), "without insist the output is not touched")
    }

    /// `chime sound play` plays a file through the same path, for its length or `--for` a time
    /// (looping), and says how it ended; `chime status` says which way sounds are played.
    @Test func soundPlayAndStatusSayTheWay() throws {
        let file = try tone(periods: 240)  // 0.5 s
        let daemon = try daemon()
        let recording = try pulse.record()
        defer { recording.stop(); daemon.stop(); pulse.stop(); bus.stop() }
        try waitForSoundServer()
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("through the sound server (pulseaudio"), "\(status.stdout)")
        let asked = monotonicSeconds()
        let played = try runChime(["sound", "play", file, "--for", "2s", "--volume", "50"], environment: bus.environment())
        let took = monotonicSeconds() - asked
        #expect(played.status == 0, "\(played.stderr)")
        #expect((1.9...3.5).contains(took), "chime sound play --for 2s took \(took) s")
        let recorded = recording.waitForQuiet(after: asked, threshold: 0.01)
        let samples = recorded.samples
        let start = try #require(onset(samples, from: recorded.firstIndex(after: asked)))
        let last = try #require(samples.lastIndex { abs($0) > 0.01 })
        let length = Double(last - start) / Double(Self.rate)
        #expect((1.9...2.1).contains(length), "it sounded \(length) s")
        let level = rms(samples, start + Self.rate / 2..<start + Self.rate)
        let expected = Double(Self.amplitude) / 2.squareRoot() * 0.125
        #expect(abs(level - expected) < 0.02 * expected, "50% is 0.5³ of the file: \(level) vs \(expected)")
    }

    /// Where no sound server answers, the player programs still play alarms, and status says so.
    @Test func withoutASoundServerAPlayerProgramPlays() throws {
        let player = try RecordingPlayer(in: bus)
        try player.install("echo \"$@\" >> \"$LOG\"\nsleep 5")
        let file = try tone(periods: 480)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try daemon(["PULSE_SERVER": "unix:\(bus.directory.path)/no-such-socket",
                                 "PATH": player.environment["PATH"]!])
        defer { daemon.stop(); recorder.stop(); pulse.stop(); bus.stop() }
        #expect(try waitUntil(30) { try center().daemonStatus().sound.contains("no sound server") })
        let status = try runChime(["status"], environment: bus.environment())
        #expect(status.stdout.contains("canberra-gtk-play plays them"), "\(status.stdout)")
        try set(["in", "1s", "--sound", file, "--volume", "50", "--id", "fallback", "Fallback"])
        #expect(waitUntil(30) { player.lines().contains { $0.contains(file) } }, "\(daemon.log)")
        let arguments = player.lines().joined(separator: "\n")
        #expect(arguments.contains("--volume=-18.1"), "50% through canberra-gtk-play's decibels: \(arguments)")
    }

    /// A sound-theme name is found through the freedesktop sound theme and played by chime itself.
    @Test func aThemeSoundIsPlayedThroughTheSoundServer() throws {
        let (recorder, daemon, recording) = try session()
        defer { stop(recorder, daemon, recording) }
        let asked = monotonicSeconds()
        try set(["in", "1s", "--sound", "bell", "--ring", "0", "--id", "bell", "Bell"])
        _ = recorder.waitForCalls(1)
        #expect(recording.hears(after: asked, above: 0.05), "\(daemon.log)")
    }

    /// One preview at a time: a second `chime sound play` stops the first, which says so and ends.
    @Test func aSecondPreviewStopsTheFirstWhichEnds() throws {
        let file = try tone(periods: 480)
        let daemon = try daemon()
        defer { daemon.stop(); pulse.stop(); bus.stop() }
        try waitForSoundServer()
        let first = try ChildProcess(chimeBinaryPath(), ["sound", "play", file, "--for", "20s"], environment: bus.environment(),
                                     logDirectory: bus.directory)
        defer { first.stop() }
        #expect(try first.readLine().hasPrefix("playing"))
        let second = try runChime(["sound", "play", file], environment: bus.environment())
        #expect(second.status == 0, "\(second.stderr)")
        #expect(waitUntil { !first.isRunning }, "the first preview's command did not hear that it was stopped")
    }
}
