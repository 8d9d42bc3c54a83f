// One sound on its way to the server: a playback stream fed from libpulse's thread.
//
// - Volume: the stream's own volume (the server applies it; it shows in the desktop's mixer).
// - Fade: a gain on the samples, from silence (or the level it starts from) to 1 over the fade time,
//   along a cubic curve: the server's own volume scale is cubic, so the fade rises evenly in the
//   percent a person sees, from the starting percent.
// - Loop: the file is decoded again from its start within the same write, so the sample after the
//   last is the first: no gap, no click that the file itself does not have.
// - Stop: the samples already queued on the server are written over, at the positions they were
//   written at (an absolute seek to the server's read position as last reported), with a 5 ms ramp
//   to silence and then silence, and the stream drains: quiet within a few milliseconds of the
//   answer, without the click of a cut. The positions are absolute because the server goes on
//   reading while its report travels to us and our write travels back: a write placed "at the read
//   position" (PA_SEEK_RELATIVE_ON_READ) lands that much later than the samples it was cut from,
//   a jump in the waveform as large as the sound itself. The ramp starts past the reported
//   position by what the server may have read since (the time since the stop was asked, and 5 ms
//   for the way back and the server's reading in blocks): PulseAudio rewinds its sink to play a
//   rewritten stretch only as far as the sink has not played it, PipeWire's server not at all,
//   and a ramp placed where either has read would be cut.
//
// Lock discipline: as SoundServer's (every field is touched with the main loop's lock held).
internal import CSound
#if canImport(Glibc)
import Glibc
#endif

final class Playback {
    enum Phase { case waiting, connecting, playing, stopping, draining, done }

    let id: Int
    let file: DecodedSound
    let options: PlaybackOptions
    /// Its server, which holds it (and closes it in its deinit, under the main loop's lock).
    /// Unchecked: a callback on libpulse's thread may reach it while the server's deinit waits for
    /// that lock on the daemon's thread, when its memory is still there but a checked `unowned`
    /// would trap.
    unowned(unsafe) let server: SoundServer
    /// The library's functions (kept here: `close` runs while the server itself goes).
    private let pulse: chime_pulse
    private(set) var phase = Phase.waiting
    private var stream: OpaquePointer?
    private var frameBytes = 0
    /// Frames written to the stream so far.
    private var written: Int64 = 0
    /// The last frames written, as sent (after the fade), for the stop's ramp: frame n is at
    /// `(n % historyFrames) * channels`.
    private var history: [Float] = []
    private var historyFrames = 0
    private var fadeFrames: Int64 = 0
    private var fadeFrom: Float = 0
    private var rampFrames = 1
    /// The decoder's header is in: the sizes above are set, and the stream can be made.
    private(set) var isPrepared = false
    /// The stream operation under way (a timing update or a drain): cancelled if the playback ends
    /// first, so its callback never finds the playback gone.
    private var operation: OpaquePointer?
    /// When the stop was asked for (CLOCK_MONOTONIC, ns): the read position the server reports
    /// after it is at most this old when the ramp is written.
    private var stopAsked: Int64 = 0
    /// Tests only: how long (µs) libpulse's thread sleeps between the server's report of its read
    /// position and the ramp's write, as a machine too busy to run it at once would hold it.
    nonisolated(unsafe) static var holdBeforeRampForTests: UInt32 = 0

    /// How much the stream keeps queued on the server: enough that a busy machine does not make
    /// gaps; the stop does not wait for it.
    static let queued = 0.1
    /// The stop's ramp to silence.
    static let ramp = 0.005
    /// How far past what the server may have read since its report the ramp starts (seconds):
    /// a held stop written with less lost the ramp's first milliseconds on PulseAudio's null sink.
    static let rampMargin = 0.005

    init(id: Int, file: DecodedSound, options: PlaybackOptions, server: SoundServer) {
        self.id = id
        self.file = file
        self.options = options
        self.server = server
        pulse = server.pulse
    }

    /// The decoder said what the file holds: the sizes that follow from it.
    func prepare() {
        frameBytes = file.channels * MemoryLayout<Float>.size
        historyFrames = file.rate  // a second: ten times what is ever queued
        history = [Float](repeating: 0, count: historyFrames * file.channels)
        fadeFrames = Int64((max(0, options.fade) * Double(file.rate)).rounded())
        fadeFrom = Float(options.fadeFrom)
        rampFrames = max(1, Int(Self.ramp * Double(file.rate)))
        isPrepared = true
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> Playback {
        Unmanaged<Playback>.fromOpaque(userdata!).takeUnretainedValue()
    }

    // MARK: - Starting

    /// Makes the stream and connects it to the default output (the context is ready).
    func connect(_ context: OpaquePointer) {
        guard isPrepared else { return }  // connected once the decoder's header is in
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(file.rate), channels: UInt8(file.channels))
        var map = pa_channel_map()
        _ = pulse.pa_channel_map_init_extend(&map, UInt32(file.channels), PA_CHANNEL_MAP_DEFAULT)
        let properties = pulse.pa_proplist_new()
        _ = pulse.pa_proplist_sets(properties, "media.role", "alarm")
        _ = pulse.pa_proplist_sets(properties, "media.name", options.title)
        _ = pulse.pa_proplist_sets(properties, "media.filename", file.path)
        stream = pulse.pa_stream_new_with_proplist(context, options.title, &spec, &map, properties)
        pulse.pa_proplist_free(properties)
        guard let stream else {
            finish(.failed("the sound server refused the stream: \(pulse.describe(pulse.pa_context_errno(context)))"))
            return
        }
        phase = .connecting
        pulse.pa_stream_set_state_callback(stream, { _, userdata in Playback.from(userdata).stateChanged() }, userdata)
        pulse.pa_stream_set_write_callback(stream, { _, bytes, userdata in Playback.from(userdata).write(bytes) }, userdata)
        pulse.pa_stream_set_started_callback(stream, { _, userdata in
            let playback = Playback.from(userdata)
            playback.server.post(.started(playback.id))
        }, userdata)
        let queuedBytes = UInt32(Self.queued * Double(file.rate)) * UInt32(frameBytes)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: queuedBytes, prebuf: UInt32.max, minreq: UInt32.max,
                                        fragsize: UInt32.max)
        var volume = pa_cvolume()
        let level = UInt32(min(Double(UInt32.max), Double(Output.norm) * Double(max(0, options.volume)) / 100))
        _ = pulse.pa_cvolume_set(&volume, UInt32(file.channels), level)
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_START_UNMUTED.rawValue)
        if pulse.pa_stream_connect_playback(stream, nil, &attributes, flags, &volume, nil) < 0 {
            finish(.failed("the sound server refused the stream: \(pulse.describe(pulse.pa_context_errno(context)))"))
        }
    }

    private func stateChanged() {
        guard let stream else { return }
        let state = pulse.pa_stream_get_state(stream)
        if state == PA_STREAM_READY {
            if phase == .connecting { phase = .playing }
            server.readOutput(index: pulse.pa_stream_get_device_index(stream), for: id)
        } else if state == PA_STREAM_FAILED {
            let reason = pulse.pa_stream_get_context(stream).map { pulse.describe(pulse.pa_context_errno($0)) } ?? "failed"
            finish(.failed("the sound server ended the stream: \(reason)"))
        } else if state == PA_STREAM_TERMINATED {
            finish(.stopped)
        }
    }

    // MARK: - Feeding

    /// The server has room for `bytes` more: decoded, faded, remembered, written.
    private func write(_ bytes: Int) {
        guard phase == .playing, let stream else { return }
        var room = bytes
        while room >= frameBytes {
            var data: UnsafeMutableRawPointer?
            var size = room
            guard pulse.pa_stream_begin_write(stream, &data, &size) >= 0, let data, size >= frameBytes else { return }
            let frames = size / frameBytes
            let samples = data.bindMemory(to: Float.self, capacity: frames * file.channels)
            let got: Int
            var atEnd = false
            switch file.read(into: samples, frames: frames) {
            case .frames(let count): got = count
            case .end(let count):
                got = count
                atEnd = true
            case .failed(let why):
                _ = pulse.pa_stream_cancel_write(stream)
                finish(.undecodable(why))
                return
            }
            shape(samples, frames: got)
            if got == 0 {
                _ = pulse.pa_stream_cancel_write(stream)
            } else if pulse.pa_stream_write(stream, data, got * frameBytes, nil, 0, PA_SEEK_RELATIVE) < 0 {
                finish(.failed("the sound server refused the sound's data"))
                return
            }
            written += Int64(got)
            if atEnd {  // the end of a sound that plays once
                drain(as: .draining)
                return
            }
            if got < frames { return }  // the decoder is behind: the rest when the server asks again
            room -= got * frameBytes
        }
    }

    /// Applies the fade to frames about to be written, and keeps them for the stop's ramp.
    private func shape(_ samples: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = file.channels
        for frame in 0..<frames {
            let position = written + Int64(frame)
            if position < fadeFrames {
                let x = Float(position) / Float(fadeFrames)
                let level = fadeFrom + (1 - fadeFrom) * x  // in the percent a person sees
                let gain = level * level * level
                for channel in 0..<channels { samples[frame * channels + channel] *= gain }
            }
            let slot = Int(position % Int64(historyFrames)) * channels
            for channel in 0..<channels { history[slot + channel] = samples[frame * channels + channel] }
        }
    }

    // MARK: - Ending

    /// Silences the sound: the server's read position is asked for, and from there the queued
    /// samples are written over with the ramp and silence.
    func stop() {
        switch phase {
        case .waiting, .connecting:
            finish(.stopped)
        case .playing, .draining:
            phase = .stopping
            stopAsked = Self.monotonicNanoseconds()
            cancelOperation()
            guard let stream, let operation = pulse.pa_stream_update_timing_info(stream, { _, _, userdata in
                let playback = Playback.from(userdata)
                playback.operationDone()
                playback.rampDown()
            }, userdata) else {
                finish(.stopped)
                return
            }
            self.operation = operation
        case .stopping, .done:
            break
        }
    }

    /// The read position is fresh: the queued frames from it are written again where they were,
    /// the same samples up to where the server may have read by now, the ramp, then silence; then drain.
    private func rampDown() {
        guard phase == .stopping, let stream else { return }
        if Self.holdBeforeRampForTests > 0 { usleep(Self.holdBeforeRampForTests) }
        guard let timing = pulse.pa_stream_get_timing_info(stream), timing.pointee.read_index_corrupt == 0 else {
            finish(.stopped)
            return
        }
        let read = max(0, timing.pointee.read_index / Int64(frameBytes))
        let queued = Int(written - read)
        if queued > 0, queued < historyFrames {
            let elapsed = max(0, Self.monotonicNanoseconds() - stopAsked)
            // What the server may have read since it reported: the time since the stop was asked,
            // and a margin for our write's way back and the server's step (it reads in blocks).
            let mayHaveRead = (elapsed / 1_000 + Int64(Self.rampMargin * 1e6)) * Int64(file.rate) / 1_000_000
            let lead = Int(min(Int64(queued), mayHaveRead))
            let tail = Self.stopTail(history: history, historyFrames: historyFrames, channels: file.channels,
                                     from: read, count: queued, rampAfter: lead, rampFrames: rampFrames)
            _ = pulse.pa_stream_write(stream, tail, tail.count * MemoryLayout<Float>.size, nil,
                                      read * Int64(frameBytes), PA_SEEK_ABSOLUTE)
        }
        drain(as: .stopping)
    }

    /// The `count` frames from position `from` as they were written (`history`: frame n at
    /// `(n % historyFrames) * channels`), the first `rampAfter` unchanged, then a ramp of
    /// `rampFrames` from the samples' level to silence, then silence; the ramp is never cut short
    /// (it starts earlier when fewer frames are queued than `rampAfter + rampFrames`).
    static func stopTail(history: [Float], historyFrames: Int, channels: Int, from: Int64, count: Int,
                         rampAfter: Int, rampFrames: Int) -> [Float] {
        var tail = [Float](repeating: 0, count: count * channels)
        let ramp = min(max(1, rampFrames), count)
        let kept = min(max(0, rampAfter), count - ramp)  // the ramp ends by the last frame queued, at the latest
        for frame in 0..<(kept + ramp) {
            let gain = frame < kept ? 1 : 1 - Float(frame - kept) / Float(ramp)
            let slot = Int((from + Int64(frame)) % Int64(historyFrames)) * channels
            for channel in 0..<channels { tail[frame * channels + channel] = history[slot + channel] * gain }
        }
        return tail
    }

    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Lets the server play what is queued, then ends (`finished` at a sound's end, `stopped` after a ramp).
    private func drain(as phase: Phase) {
        self.phase = phase
        cancelOperation()
        guard let stream, let operation = pulse.pa_stream_drain(stream, { _, _, userdata in
            let playback = Playback.from(userdata)
            playback.operationDone()
            playback.finish(playback.phase == .draining ? .finished : .stopped)
        }, userdata) else {
            finish(phase == .draining ? .finished : .stopped)
            return
        }
        self.operation = operation
    }

    private func operationDone() {
        if let operation { pulse.pa_operation_unref(operation) }
        operation = nil
    }

    private func cancelOperation() {
        if let operation { pulse.pa_operation_cancel(operation) }
        operationDone()
    }

    /// Ends the playback: the stream goes, the server's list forgets it, and the daemon is told.
    func finish(_ ending: Ending) {
        guard phase != .done else { return }
        close()
        server.post(.ended(id, ending))
        withExtendedLifetime(self) { server.forget(id) }
    }

    /// Lets the stream go (its operation cancelled, its callbacks cleared), touching nothing of the
    /// server's: what its deinit calls.
    func close() {
        phase = .done
        cancelOperation()
        if let stream {
            self.stream = nil
            pulse.pa_stream_set_state_callback(stream, nil, nil)
            pulse.pa_stream_set_write_callback(stream, nil, nil)
            pulse.pa_stream_set_started_callback(stream, nil, nil)
            _ = pulse.pa_stream_disconnect(stream)
            pulse.pa_stream_unref(stream)
        }
    }
}
