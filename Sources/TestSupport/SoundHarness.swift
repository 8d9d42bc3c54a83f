// A real sound server for tests: PulseAudio from Debian's package, with a null sink (no sound
// card), on a socket of the test's own; and a recording of that sink's monitor, each chunk stamped
// with the monotonic time it arrived, so a test can say when a sound began and ended.
import Foundation
import Posix

/// `pulseaudio` with one null sink (`chime_test`, 48 kHz stereo float) playing silence all the time, so
/// the monitor's recording runs in real time even between sounds: a test desktop
/// (scripts/testdesktop.py) with just its sound server, stopped by its PID.
public final class PulseAudioSession: @unchecked Sendable {
    private let desktop: TestDesktop
    public var directory: URL { desktop.directory }
    public let sink = "chime_test"
    public static let rate = 48_000

    /// `PULSE_SERVER` for clients of this server.
    public var address: String { desktop.environment["PULSE_SERVER"] ?? "" }
    public var environment: [String: String] {
        ["PULSE_SERVER": address, "PULSE_CLIENTCONFIG": desktop.environment["PULSE_CLIENTCONFIG"] ?? ""]
    }

    /// Starts the server; it is ready once its sink runs (an idle null sink sleeps up to 2 s before it
    /// notices its first stream: the harness waits for the monitor's first samples).
    public init() throws {
        desktop = try TestDesktop(.sound)
    }

    /// The test process's environment, with this server's address.
    public var clientEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }

    /// Runs `pactl` against this server.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> CommandResult {
        try runProgram(ChildProcess.which("pactl") ?? "pactl", arguments.map { Array($0.utf8) }, environment: clientEnvironment)
    }

    /// The sink's mute and loudest channel's volume in percent.
    public func sinkState() throws -> (muted: Bool, percent: Int) {
        let mute = try pactl(["get-sink-mute", sink]).stdout
        let volume = try pactl(["get-sink-volume", sink]).stdout
        let percents = volume.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.hasSuffix("%") }
            .compactMap { Int($0.dropLast()) }
        return (mute.contains("yes"), percents.max() ?? -1)
    }

    /// Sets the sink's mute and volume (percent).
    public func setSink(muted: Bool, percent: Int) throws {
        try pactl(["set-sink-volume", sink, "\(percent)%"])
        try pactl(["set-sink-mute", sink, muted ? "1" : "0"])
    }

    /// How many sound streams play now (the silence among them).
    public func streams() throws -> Int {
        try pactl(["list", "short", "sink-inputs"]).stdout.split(separator: "\n").count
    }

    public func stop() { desktop.stop() }

    /// Starts recording the sink's monitor.
    public func record() throws -> MonitorRecording {
        try MonitorRecording(source: "\(sink).monitor", environment: clientEnvironment, logDirectory: directory)
    }
}

/// The null sink's monitor recorded by `parec` (mono, 48 kHz float), each chunk stamped with the
/// monotonic time it arrived. A sample's arrival is an upper bound of when it played: parec asks for
/// 5 ms chunks.
public final class MonitorRecording: @unchecked Sendable {
    private let child: ChildProcess
    private let lock = NSLock()
    private var samples: [Float] = []
    /// (index of a chunk's first sample, monotonic seconds of its arrival)
    private var stamps: [(Int, Double)] = []
    private var reader: Thread?
    private var finished = false
    public let rate = PulseAudioSession.rate

    init(source: String, environment: [String: String], logDirectory: URL) throws {
        child = try ChildProcess("parec", ["-d", source, "--raw", "--format=float32le", "--rate=\(PulseAudioSession.rate)",
                                           "--channels=1", "--latency-msec=5"],
                                 environment: environment, logDirectory: logDirectory)
        let thread = Thread { [weak self] in self?.readAll() }
        reader = thread
        thread.start()
        // The first chunk says the recording runs.
        guard waitUntil(30, { lock.withLock { !samples.isEmpty } }) else { throw HarnessError("parec recorded nothing within 30 s") }
    }

    private func readAll() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var carry: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { child.readAvailable(into: $0) }
            let now = monotonicSeconds()
            guard n > 0 else { break }
            carry += buffer[0..<n]
            let whole = carry.count / 4 * 4
            let floats = carry[0..<whole].withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            carry.removeFirst(whole)
            lock.withLock {
                stamps.append((samples.count, now))
                samples += floats
            }
        }
        lock.withLock { finished = true }
    }

    /// Stops recording: what was recorded stays readable.
    public func stop() {
        child.stop()
        _ = waitUntil { lock.withLock { finished } }
    }

    /// What is recorded so far, samples and arrival times taken together: indexes found in one
    /// snapshot always fall within its samples (the recording grows meanwhile).
    public func snapshot() -> RecordingSnapshot {
        lock.withLock { RecordingSnapshot(samples: samples, stamps: stamps) }
    }

    /// Waits until `condition` holds of what is recorded (checked every 20 ms, at most `timeout`
    /// seconds); the last snapshot looked at.
    @discardableResult
    public func wait(timeout: Double = 10, until condition: (RecordingSnapshot) -> Bool) -> RecordingSnapshot {
        var last = snapshot()
        _ = waitUntil(timeout) {
            last = snapshot()
            return condition(last)
        }
        return last
    }
}

extension MonitorRecording {
    /// Waits until something louder than `threshold` was recorded after the monotonic time `time`
    /// and then `quiet` samples (a tenth of a second by default) of nothing louder after it: a
    /// sound that ended, whole, however late the monitor delivers it.
    @discardableResult
    public func waitForQuiet(after time: Double, threshold: Float, quiet: Int = 4_800, timeout: Double = 30) -> RecordingSnapshot {
        wait(timeout: timeout) { snapshot in
            let from = snapshot.firstIndex(after: time)
            guard let last = snapshot.samples[from...].lastIndex(where: { abs($0) > threshold }) else { return false }
            return snapshot.count >= last + quiet
        }
    }

    /// Whether something louder than `threshold` is recorded after the monotonic time `time`,
    /// waiting for it at most `timeout` seconds.
    public func hears(after time: Double, above threshold: Float, timeout: Double = 30) -> Bool {
        wait(timeout: timeout) { $0.samples(after: time).contains { abs($0) > threshold } }
            .samples(after: time).contains { abs($0) > threshold }
    }

    /// Waits until `length` samples were recorded from the first one louder than `threshold`
    /// after the monotonic time `time` (whatever they hold).
    @discardableResult
    public func waitForSound(after time: Double, threshold: Float, length: Int, timeout: Double = 30) -> RecordingSnapshot {
        wait(timeout: timeout) { snapshot in
            let from = snapshot.firstIndex(after: time)
            guard let first = snapshot.samples[from...].firstIndex(where: { abs($0) > threshold }) else { return false }
            return snapshot.count >= first + length
        }
    }
}

/// The recording up to a moment.
public struct RecordingSnapshot: Sendable {
    public let samples: [Float]
    /// (index of a chunk's first sample, monotonic seconds of its arrival)
    let stamps: [(Int, Double)]

    public var count: Int { samples.count }

    /// The monotonic time sample `index` arrived.
    public func arrival(of index: Int) -> Double {
        // The chunk holding it is the last that starts at or before it.
        var low = 0, high = stamps.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if stamps[middle].0 <= index { low = middle } else { high = middle - 1 }
        }
        return stamps.isEmpty ? 0 : stamps[low].1
    }

    /// The index of the first sample recorded after the monotonic time `time` (`count` if none).
    public func firstIndex(after time: Double) -> Int {
        stamps.first { $0.1 >= time }?.0 ?? samples.count
    }

    /// The samples recorded after the monotonic time `time`.
    public func samples(after time: Double) -> ArraySlice<Float> { samples[firstIndex(after: time)...] }
}

/// CLOCK_MONOTONIC in seconds.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Writes `samples` (interleaved when `channels` > 1) as a 32-bit float WAV file at `rate`.
public func writeWAV(_ samples: [Float], rate: Int, channels: Int = 1, to path: String) throws {
    var data = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    let bytes = UInt32(samples.count * 4)
    data.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); data.append(contentsOf: Array("WAVE".utf8))
    data.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(3); u16(UInt16(channels)); u32(UInt32(rate))
    u32(UInt32(rate * channels * 4)); u16(UInt16(channels * 4)); u16(32)
    data.append(contentsOf: Array("data".utf8)); u32(bytes)
    samples.withUnsafeBytes { data.append(contentsOf: $0) }
    try data.write(to: URL(fileURLWithPath: path))
}

/// Root-mean-square level of `samples[range]`.
public func rms(_ samples: [Float], _ range: Range<Int>) -> Double {
    let range = range.clamped(to: 0..<samples.count)
    guard !range.isEmpty else { return 0 }
    var sum = 0.0
    for i in range { sum += Double(samples[i]) * Double(samples[i]) }
    return (sum / Double(range.count)).squareRoot()
}
