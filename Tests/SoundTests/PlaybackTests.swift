import Foundation
import Posix
import Sound
import TestSupport
import XCTest

final class PlaybackTests: XCTestCase {
    var pulse: PulseAudioSession!
    var directory: URL!

    override func setUpWithError() throws {
        pulse = try PulseAudioSession()
        directory = try makeTemporaryDirectory("chime-sound")
        setenv("PULSE_SERVER", pulse.address, 1)
    }

    override func tearDown() {
        pulse?.stop()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// A sine of 480 Hz (exactly 100 samples a period at 48 kHz) lasting `seconds`, amplitude 0.5.
    func sine(seconds: Double) throws -> String {
        let path = directory.appendingPathComponent("sine.wav").path
        let count = Int(seconds * 48_000)
        try writeWAV((0..<count).map { Float(0.5 * sin(2 * Double.pi * Double($0) / 100)) }, rate: 48_000, to: path)
        return path
    }

    func waitForEvent(_ server: SoundServer, timeout: Double = 5, _ match: (SoundEvent) -> Bool) -> SoundEvent? {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var fds = [pollfd(fd: server.wakeup.fd, events: Int16(POLLIN), revents: 0)]
            _ = try? Sys.poll(&fds, timeout: 50)
            for event in server.takeEvents() where match(event) { return event }
        }
        return nil
    }

    func testExperiment() throws {
        let file = try sine(seconds: 1)
        let recording = try pulse.record()
        let server = try SoundServer(applicationName: "chime-test")
        XCTAssertNotNil(waitForEvent(server) { if case .connected = $0 { true } else { false } })
        let start = monotonicSeconds()
        let id = try server.play(file, PlaybackOptions(volume: 70, fade: 1, looping: true, title: "test"))
        usleep(2_500_000)
        let stopAt = monotonicSeconds()
        server.stop(id)
        XCTAssertNotNil(waitForEvent(server) { $0 == .ended(id, .stopped) })
        usleep(300_000)
        recording.stop()
        let samples = recording.recorded
        let from = recording.firstIndex(after: start - 0.05)
        var first = from
        while first < samples.count, abs(samples[first]) < 0.001 { first += 1 }
        print("first sound", recording.arrival(of: first) - start)
        for window in stride(from: first, to: min(samples.count, first + 48_000 * 3), by: 4_800) {
            print(String(format: "%.1f %.4f", Double(window - first) / 48_000, rms(samples, window..<window + 4_800)))
        }
        var last = samples.count - 1
        while last > 0, abs(samples[last]) < 0.001 { last -= 1 }
        print("last sound after stop", recording.arrival(of: last) - stopAt)
        var maxJump: Float = 0
        for i in (first + 48_000)..<(first + 2 * 48_000) { maxJump = max(maxJump, abs(samples[i] - samples[i - 1])) }
        print("max jump", maxJump)
    }
}
