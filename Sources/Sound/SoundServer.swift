// chime's own connection to the sound server: PulseAudio's client API, which PipeWire desktops serve
// too (pipewire-pulse), on libpulse's threaded main loop.
//
// The sound is fed from libpulse's thread, never from the daemon's loop: a slow disk write or a
// stuck D-Bus peer in the daemon cannot make a gap in an alarm. What the daemon must hear (the
// server is there or gone, a sound started, which output it plays on, a sound ended) waits in a list
// and wakes the daemon's poll through an eventfd (`wakeup`, `takeEvents`).
//
// Threads: every mutable field of the server and of its playbacks is touched only with the main
// loop's lock held. libpulse holds it while it runs a callback; the daemon's calls take it
// (`locked`). That lock is the whole of the discipline, as libpulse's threaded main loop prescribes.
internal import CSound
import Dispatch
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// How one sound plays.
public struct PlaybackOptions: Hashable, Sendable {
    /// The stream's own volume in percent, on the server's scale (what pavucontrol and GNOME's
    /// sound settings show): 100 plays the file as it is.
    public var volume: Int
    /// Seconds from `fadeFrom` (silence by default) to `volume`.
    public var fade: Double
    /// The level the fade starts from, a fraction of `volume` on the server's scale (0: silence).
    public var fadeFrom: Double = 0
    /// Plays the file again and again, each play starting on the sample after the last, until stopped.
    public var looping: Bool
    /// What the server's mixer shows for the stream (the alarm's title).
    public var title: String

    public init(volume: Int = 100, fade: Double = 0, fadeFrom: Double = 0, looping: Bool = false, title: String = "chime") {
        self.volume = volume
        self.fade = fade
        self.fadeFrom = min(max(fadeFrom, 0), 1)
        self.looping = looping
        self.title = title
    }
}

/// An output (a sink): its name and how loud it is.
public struct Output: Hashable, Sendable {
    public var sink: String
    public var muted: Bool
    /// Each channel's volume on the server's scale (`Output.norm` is 100%).
    public var volumes: [UInt32]

    public init(sink: String, muted: Bool, volumes: [UInt32]) {
        self.sink = sink
        self.muted = muted
        self.volumes = volumes
    }

    /// The server's 100%.
    public static var norm: UInt32 { chime_volume_norm }
    /// The loudest channel in percent.
    public var percent: Int { Int((Double(volumes.max() ?? 0) * 100 / Double(Self.norm)).rounded()) }
    /// Nothing would be heard from it.
    public var isSilent: Bool { muted || (volumes.max() ?? 0) == 0 }
}

/// How a sound's play ended.
public enum Ending: Hashable, Sendable {
    /// The file played to its end (a sound that does not loop).
    case finished
    /// `stop` was asked: it went quiet with a short ramp.
    case stopped
    /// The server refused or lost it.
    case failed(String)
    /// Its decoder died or stalled (a file that crashes or hangs the parser): why.
    case undecodable(String)
}

/// What the daemon hears from the sound server's thread.
public enum SoundEvent: Hashable, Sendable {
    /// Connected: the server's name and version ("pulseaudio 16.1", "PulseAudio (on PipeWire 0.3.65) 15.0.0").
    case connected(String)
    /// No sound server, or it went away: why. Every sound playing ended with `.failed` before this.
    case unavailable(String)
    /// The server began playing sound `id`.
    case started(Int)
    /// Sound `id` plays on this output (read once its stream is up).
    case playingOn(Int, Output)
    /// Sound `id` ended.
    case ended(Int, Ending)
    /// What `readOutput` found (nil: no such sink).
    case output(String, Output?)
    /// `setOutput` on a sink finished: nil, or why it failed.
    case outputSet(String, String?)
}

public final class SoundServer: @unchecked Sendable {
    let pulse: chime_pulse
    private let mainloop: OpaquePointer
    private var context: OpaquePointer?
    private let applicationName: String
    /// Readable when `takeEvents` has something.
    public let wakeup: EventDescriptor
    private var events: [SoundEvent] = []
    private var playbacks: [Int: Playback] = [:]
    private var lastID = 0
    /// Whether the context is up (sounds asked for before it is wait for it).
    private var ready = false

    /// Loads the libraries, starts libpulse's thread and begins connecting to the server (never
    /// starting one: a daemon must not spawn a sound server). The answer comes as an event.
    public init(applicationName: String) throws(SoundError) {
        switch Libraries.loaded {
        case .success(let libraries): pulse = libraries.pulse
        case .failure(let error): throw error
        }
        do { wakeup = try EventDescriptor() } catch { throw SoundError("\(error)") }
        guard let mainloop = pulse.pa_threaded_mainloop_new() else { throw SoundError("libpulse could not make its main loop") }
        self.mainloop = mainloop
        self.applicationName = applicationName
        locked { connect() }
        guard pulse.pa_threaded_mainloop_start(mainloop) >= 0 else {
            locked { dropContext() }
            pulse.pa_threaded_mainloop_free(mainloop)
            throw SoundError("libpulse could not start its thread")
        }
    }

    deinit {
        locked {
            // The streams go without a word back: a playback may not reach its server from here.
            for playback in playbacks.values { playback.close() }
            playbacks.removeAll()
            dropContext()
        }
        pulse.pa_threaded_mainloop_stop(mainloop)
        pulse.pa_threaded_mainloop_free(mainloop)
    }

    /// Runs `body` with the main loop's lock held (from the daemon's thread only).
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pulse.pa_threaded_mainloop_lock(mainloop)
        defer { pulse.pa_threaded_mainloop_unlock(mainloop) }
        return try body()
    }

    /// What happened since the last call, in order.
    public func takeEvents() -> [SoundEvent] {
        wakeup.clear()
        return locked {
            defer { events.removeAll() }
            return events
        }
    }

    /// Tells the daemon (lock held).
    func post(_ event: SoundEvent) {
        events.append(event)
        wakeup.signal()
    }

    // MARK: - The connection

    /// Connects again after the server went away (nothing happens while connected or connecting).
    public func reconnect() {
        locked {
            guard context == nil else { return }
            connect()
        }
    }

    private func connect() {
        let properties = pulse.pa_proplist_new()
        _ = pulse.pa_proplist_sets(properties, "application.name", applicationName)
        _ = pulse.pa_proplist_sets(properties, "application.id", "org.chime.Alarms")
        _ = pulse.pa_proplist_sets(properties, "application.icon_name", "alarm-symbolic")
        context = pulse.pa_context_new_with_proplist(pulse.pa_threaded_mainloop_get_api(mainloop), applicationName, properties)
        pulse.pa_proplist_free(properties)
        guard let context else {
            post(.unavailable("libpulse could not make a context"))
            return
        }
        pulse.pa_context_set_state_callback(context, { _, userdata in
            SoundServer.with(userdata) { $0.contextChanged() }
        }, Unmanaged.passUnretained(self).toOpaque())
        // A server that is plainly not there fails within the call: the state callback has then
        // already let the context go (`lost`), and it must not be touched again.
        if pulse.pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0, let failed = self.context {
            lost(pulse.describe(pulse.pa_context_errno(failed)))
        }
    }

    /// Runs a callback's work on the server its userdata names, without taking a reference: the
    /// last reference to a server must never be let go on libpulse's thread, whose deinit would take
    /// the main loop's lock from inside the loop (libpulse aborts). A server whose owner lets it go
    /// meanwhile waits in its deinit for the lock this callback holds, so it is there until the
    /// callback returns.
    static func with(_ userdata: UnsafeMutableRawPointer?, _ body: (SoundServer) -> Void) {
        Unmanaged<SoundServer>.fromOpaque(userdata!)._withUnsafeGuaranteedRef(body)
    }

    private func contextChanged() {
        guard let context else { return }
        let state = pulse.pa_context_get_state(context)
        if state == PA_CONTEXT_READY {
            ready = true
            let operation = pulse.pa_context_get_server_info(context, { _, info, userdata in
                let name = info?.pointee.server_name.map { String(cString: $0) } ?? "a sound server"
                let version = info?.pointee.server_version.map { String(cString: $0) } ?? ""
                SoundServer.with(userdata) { $0.post(.connected(version.isEmpty ? name : "\(name) \(version)")) }
            }, Unmanaged.passUnretained(self).toOpaque())
            if let operation { pulse.pa_operation_unref(operation) }
            for playback in playbacks.values where playback.phase == .waiting && playback.isPrepared { playback.connect(context) }
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            lost(pulse.describe(pulse.pa_context_errno(context)))
        }
    }

    /// The server is gone (or never was): every sound ends, and the daemon is told why.
    private func lost(_ reason: String) {
        for playback in playbacks.values { playback.finish(.failed("the sound server went away: \(reason)")) }
        dropContext()
        post(.unavailable(reason))
    }

    private func dropContext() {
        ready = false
        guard let context else { return }
        self.context = nil
        pulse.pa_context_set_state_callback(context, nil, nil)
        pulse.pa_context_disconnect(context)
        pulse.pa_context_unref(context)
    }

    // MARK: - Sounds

    /// Starts playing the file at `path`: its identifier, for `stop` and the events. Its decoder
    /// (a process of its own) is started here, and what it says of the file is waited for on a
    /// thread of its own, never by the caller: a file that is no sound ends `failed` with the
    /// decoder's reason, a decoder that dies or says nothing within a second ends it `undecodable`;
    /// otherwise the sound starts as soon as the server is there.
    public func play(_ path: String, _ options: PlaybackOptions) throws(SoundError) -> Int {
        let file = try DecodedSound(path: path, looping: options.looping)
        let id = locked {
            lastID += 1
            playbacks[lastID] = Playback(id: lastID, file: file, options: options, server: self)
            if context == nil { connect() }
            return lastID
        }
        // (The file is this thread's alone until the header is in; the playback is touched only with
        // the main loop's lock held, as everything of the server's.)
        nonisolated(unsafe) let decoding = file
        DispatchQueue.global(qos: .userInitiated).async { [weak self] in
            let failure = Self.readHeader(of: decoding)
            self?.headerRead(id, failure: failure)
        }
        return id
    }

    /// Waits for what the decoder says of its file: nil, or how the sound ends without playing.
    private static func readHeader(of file: DecodedSound) -> Ending? {
        do throws(DecodedSound.HeaderError) {
            try file.readHeader()
            return nil
        } catch {
            return error.refused ? .failed(error.message) : .undecodable(error.message)
        }
    }

    /// The decoder of sound `id` said what its file holds (or `failure`): the sound starts, or ends.
    private func headerRead(_ id: Int, failure: Ending?) {
        locked {
            guard let playback = playbacks[id] else { return }
            if let failure { return playback.finish(failure) }
            playback.prepare()
            if ready, let context, playback.phase == .waiting { playback.connect(context) }
        }
    }

    /// Whether libsndfile and libpulse can be loaded here (loads them, the first time).
    public static var librariesAvailable: Bool {
        if case .success = Libraries.loaded { return true }
        return false
    }

    /// How long one play of the file at `path` lasts, in seconds.
    public static func duration(of path: String) throws(SoundError) -> Double {
        let file = try DecodedSound(path: path, looping: false)
        do { try file.readHeader() } catch { throw SoundError(error.message) }
        return file.seconds
    }

    /// The program that decodes sound files, in a process of its own (`--decode-sound PATH` is
    /// added): the daemon's own, `chime daemon`. Set before the first sound.
    public static var decoder: [String] {
        get { DecodedSound.decoder }
        set { DecodedSound.decoder = newValue }
    }

    /// Keeps a decoder started and waiting for its file (the daemon: its alarms' first sample does
    /// not wait for a program to start); off, every sound starts its own.
    public static var keepSpareDecoder: Bool {
        get { DecodedSound.Spare.enabled }
        set {
            guard newValue != DecodedSound.Spare.enabled else { return }
            DecodedSound.Spare.enabled = newValue
            if newValue { DispatchQueue.global(qos: .utility).async { DecodedSound.Spare.prepare() } } else { DecodedSound.Spare.discardWaiting() }
        }
    }

    /// Silences sound `id` with a short ramp (`ended(id, .stopped)` follows once it is quiet).
    public func stop(_ id: Int) {
        locked { playbacks[id]?.stop() }
    }

    /// A playback is done with: it leaves the list (lock held).
    func forget(_ id: Int) {
        playbacks[id] = nil
    }

    // MARK: - Outputs

    /// Reads a sink's mute and volume (`output` event; none when the server is not there: the
    /// `unavailable` event says so).
    public func readOutput(_ sink: String) {
        locked {
            guard let context, ready else { return }
            let request = Unmanaged.passRetained(SinkRequest(server: self, sink: sink)).toOpaque()
            let operation = pulse.pa_context_get_sink_info_by_name(context, sink, { _, info, end, userdata in
                let request = Unmanaged<SinkRequest>.fromOpaque(userdata!)
                let value = request.takeUnretainedValue()
                if let info {
                    value.found = Output(info.pointee)
                } else if end != 0 {
                    value.server.post(.output(value.sink, value.found))
                    request.release()
                }
            }, request)
            if let operation { pulse.pa_operation_unref(operation) } else { Unmanaged<SinkRequest>.fromOpaque(request).release() }
        }
    }

    /// Sets a sink's volume (each channel) and then its mute (`outputSet` event).
    public func setOutput(_ output: Output) {
        locked {
            guard let context, ready else {
                post(.outputSet(output.sink, "no sound server"))
                return
            }
            var volume = pa_cvolume()
            volume.channels = UInt8(min(output.volumes.count, Int(chime_channels_max)))
            withUnsafeMutableBytes(of: &volume.values) { raw in
                let values = raw.bindMemory(to: UInt32.self)
                for (index, value) in output.volumes.prefix(Int(volume.channels)).enumerated() { values[index] = value }
            }
            let request = Unmanaged.passRetained(SinkRequest(server: self, sink: output.sink, muted: output.muted)).toOpaque()
            let operation = pulse.pa_context_set_sink_volume_by_name(context, output.sink, &volume, { context, success, userdata in
                let request = Unmanaged<SinkRequest>.fromOpaque(userdata!)
                let value = request.takeUnretainedValue()
                let pulse = value.server.pulse
                guard success != 0, let context else {
                    value.server.post(.outputSet(value.sink, context.map { pulse.describe(pulse.pa_context_errno($0)) } ?? "no sound server"))
                    request.release()
                    return
                }
                let operation = pulse.pa_context_set_sink_mute_by_name(context, value.sink, value.muted ? 1 : 0, { context, success, userdata in
                    let request = Unmanaged<SinkRequest>.fromOpaque(userdata!)
                    let value = request.takeUnretainedValue()
                    let pulse = value.server.pulse
                    value.server.post(.outputSet(value.sink, success != 0 ? nil : context.map { pulse.describe(pulse.pa_context_errno($0)) }))
                    request.release()
                }, userdata)
                if let operation { pulse.pa_operation_unref(operation) } else {
                    value.server.post(.outputSet(value.sink, "the server refused the mute"))
                    request.release()
                }
            }, request)
            if let operation { pulse.pa_operation_unref(operation) } else {
                Unmanaged<SinkRequest>.fromOpaque(request).release()
                post(.outputSet(output.sink, pulse.describe(pulse.pa_context_errno(context))))
            }
        }
    }

    /// Reads the sink a playback plays on (lock held).
    func readOutput(index: UInt32, for id: Int) {
        guard let context else { return }
        let request = Unmanaged.passRetained(SinkRequest(server: self, sink: "", playback: id)).toOpaque()
        let operation = pulse.pa_context_get_sink_info_by_index(context, index, { _, info, end, userdata in
            let request = Unmanaged<SinkRequest>.fromOpaque(userdata!)
            let value = request.takeUnretainedValue()
            if let info {
                value.server.post(.playingOn(value.playback, Output(info.pointee)))
            } else if end != 0 {
                request.release()
            }
        }, request)
        if let operation { pulse.pa_operation_unref(operation) } else { Unmanaged<SinkRequest>.fromOpaque(request).release() }
    }
}

/// What an asynchronous question about a sink carries to its callback (on libpulse's thread,
/// which lets it go there).
private final class SinkRequest {
    /// Not held: letting the box go must never let the server go on libpulse's thread (see
    /// `SoundServer.with`). A server's deinit disconnects under the lock, and libpulse calls no
    /// callback of an operation the disconnection cancels, so no box reaches a server that is gone.
    unowned(unsafe) let server: SoundServer
    let sink: String
    let muted: Bool
    let playback: Int
    var found: Output?

    init(server: SoundServer, sink: String, muted: Bool = false, playback: Int = 0) {
        self.server = server
        self.sink = sink
        self.muted = muted
        self.playback = playback
    }
}

extension Output {
    init(_ info: pa_sink_info) {
        var volume = info.volume
        let channels = Int(volume.channels)
        let volumes = withUnsafeBytes(of: &volume.values) { Array($0.bindMemory(to: UInt32.self).prefix(channels)) }
        self.init(sink: info.name.map { String(cString: $0) } ?? "", muted: info.mute != 0, volumes: volumes)
    }
}
