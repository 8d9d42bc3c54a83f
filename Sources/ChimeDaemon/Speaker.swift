// How an alarm's sound reaches a person: chime plays it itself through the sound server
// (PulseAudio's API, which PipeWire serves too: the Sound module), with the alarm's volume and
// fade and a seamless loop; where no sound server answers, a player program plays it (each play a
// process, started again when it ends, without volume or fade: `soundPlayers`).
//
// The part also keeps an `insist` alarm's promise: the output it plays on, when muted or turned
// down, is unmuted and raised to 100% for the ring and put back as it was when no insisting sound
// plays any more. What to put back is in the store before the output is touched, so a daemon
// killed mid-ring puts it back at its next start. It is put back only if it is still as chime
// left it: a person who turned it down meanwhile keeps their choice.
//
// The sound libraries are loaded and the server connected at the first sound, or when someone asks
// how sounds are played (`whenSettled`): a daemon whose alarms have no sound never loads them.
// They are loaded on a thread of their own (20-80 ms of dlopen and libpulse's start, which held
// the loop when `Status` first asked); a sound wanted meanwhile waits for that thread.
//
// Other parts may: `play` a sound (for an alarm, once or looping), `stop` a play, `preview` one
// (the app's Preview button and `chime sound play`), ask `playsItself` (a popup then carries no
// sound for the server to play), `whenSettled` and `statusText`. It owns the store's
// `raised_outputs` table (its face: `SpeakerStore`) and asks the children to run players. It tells
// the others (`events`) of a play that ended by itself (`ended`), a sound that rings into a muted
// or silent output (`silent`), and a preview's end (`previewEnded`).
import ChimeCenter
import Logging
import Posix
import Sound
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// What to play, and how.
struct SoundRequest {
    var sound: Sound
    /// Percent of the file as recorded.
    var volume = 100
    var fade = TimeSpan.zero
    /// The percent of `volume` the fade starts from (0: silence).
    var fadeFrom = 0
    /// Again and again until stopped; else once.
    var looping = false
    /// Unmute and raise the output for it.
    var insist = false
    /// What the mixer shows (the alarm's title).
    var title = "chime"
}

/// Why a sound cannot be previewed.
struct PreviewError: Error {
    var message: String
}

final class Speaker: LoopPart {
    /// One sound playing.
    struct Play {
        var request: SoundRequest
        /// Its playback on the sound server.
        var playback: Int?
        /// Its player program, where no sound server plays it.
        var player: pid_t?
        /// When the player starts again (a looping sound whose player ended).
        var nextStart: Instant?
        var started: Instant
        var playerStarts = 0
        /// Failed starts of the player in a row (a binary being replaced: ETXTBSY).
        var failedStarts = 0
        /// The output it plays on, once known.
        var output: Output?
        /// Someone asked it to stop (its ramp may still be sounding).
        var stopping = false
    }

    /// How many failed starts of the player in a row end the sound.
    static let playerStartAttempts = 3
    /// The smallest gap between two starts of a player, so a player that ends at once cannot make a busy loop.
    static let smallestReplay = TimeSpan.seconds(1)
    /// How long after the sound server was found missing chime tries it again (at the next sound).
    static let retryServer = TimeSpan.seconds(30)

    private var plays: [Int: Play] = [:]
    private var lastPlay = 0
    private let store: any SpeakerStore
    private let children: any ProgramRunner
    private let clock: WallClock
    private let logger: Logger
    /// The player program for when no sound server answers.
    let player: (name: String, path: String)?
    /// How long a player program may run.
    var playerTimeLimit = TimeSpan.seconds(30)

    /// chime's connection to the sound server, made at the first sound (or the first question of
    /// how sounds are played); nil before, or where the libraries are missing.
    private var server: SoundServer?
    private enum ServerState: Equatable {
        /// Nothing loaded yet: a daemon whose alarms have no sound never loads libpulse.
        case untried
        case connecting(since: Instant)
        case connected(String)
        /// Why not, and since when (`distantFuture`: for good, e.g. the libraries are missing).
        case unavailable(String, since: Instant)
    }
    private var serverState: ServerState
    /// Who waits to know how sounds are played (`whenSettled`).
    private var settleWaiters: [() -> Void] = []

    /// Outputs raised for insisting sounds, as stored: what to put back.
    private var raised: [String: RaisedOutput] = [:]
    /// Outputs being put back now: their current state was asked for.
    private var restoring: Set<String> = []
    /// Outputs being put back now: set back, waiting for the server to confirm.
    private var puttingBack: Set<String> = []

    /// What the speaker tells the other parts (wired by the daemon).
    struct Events {
        /// A play ended by itself (a sound that plays once finished, or nothing could play it).
        var ended: (_ play: Int) -> Void = { _ in }
        /// A play without `insist` rings into a muted or silent output.
        var silent: (_ play: Int, _ output: Output) -> Void = { _, _ in }
        /// A preview ended: its number, how ("finished", "stopped", "failed: ..."), and a note when it
        /// sounded into a muted or silent output ("" otherwise).
        var previewEnded: (_ play: Int, _ how: String, _ note: String) -> Void = { _, _, _ in }
    }
    var events = Events()

    init(store: any SpeakerStore, children: any ProgramRunner, clock: WallClock, logger: Logger, useSoundServer: Bool = true) {
        self.store = store
        self.children = children
        self.clock = clock
        self.logger = logger
        player = findSoundPlayer()
        // Sound files are decoded by the daemon's own program, in a process of its own.
        if SoundServer.decoder.isEmpty { SoundServer.decoder = ["/proc/self/exe", "daemon"] }
        serverState = useSoundServer ? .untried : .unavailable("chime's own player is switched off", since: .distantFuture)
    }

    /// The next alarm is due at `time`: within a minute, a decoder is started ahead for its sound
    /// (and one is kept from then on), so not even the daemon's first sound waits for a program to
    /// start. A daemon with no alarm near (most of the test suite's) starts none.
    func expectAlarm(at time: Instant?, now: Instant) {
        guard let time, time - now < Self.decoderLead, case .untried = serverState else { return }
        SoundServer.keepSpareDecoder = true
    }

    static let decoderLead = TimeSpan.seconds(60)

    /// How long those who ask how sounds are played wait for a sound server to answer (a local
    /// socket answers in about a millisecond); after it, the answer says "connecting".
    static let connectionWait = TimeSpan.seconds(1)

    /// Loads the libraries and connects, the first time, or again once `retryServer` has passed
    /// since the server was found missing.
    private func connectIfNeeded() {
        switch serverState {
        case .untried: break
        case .unavailable: guard retryDue else { return }
        case .connecting, .connected: return
        }
        if let server {
            server.reconnect()
        } else if opening == nil {
            guard let done = try? EventDescriptor() else { return opened(Result { () throws(SoundError) in try SoundServer(applicationName: "chime") }) }
            let job = Background { () -> OpenedServer in
                defer { done.signal() }
                return OpenedServer(result: Result { () throws(SoundError) in try SoundServer(applicationName: "chime") })
            }
            opening = (job, done)
        }
        serverState = .connecting(since: clock.now())
    }

    /// The thread loading the libraries and starting the server's connection, and its signal.
    private var opening: (job: Background<OpenedServer>, done: EventDescriptor)?

    /// What that thread made, handed to the loop once it ended.
    private struct OpenedServer: @unchecked Sendable {
        let result: Result<SoundServer, SoundError>
    }

    /// Takes what the opening thread made (waiting for it, when a sound cannot wait).
    private func finishOpening() {
        guard let (job, done) = opening else { return }
        opening = nil
        done.clear()
        opened(job.wait().result)
    }

    private func opened(_ result: Result<SoundServer, SoundError>) {
        switch result {
        case .success(let made):
            server = made  // connecting: its events say when it is done
            serverState = .connecting(since: clock.now())
        case .failure(let error):
            // The libraries are missing: the player programs it is, for good.
            serverState = .unavailable(error.message, since: .distantFuture)
            logger.info("chime cannot play sounds itself (\(error.message)); \(player?.name ?? "no player program") plays them")
            settled()
        }
    }

    /// Calls `body` once it is known how sounds are played (connecting first if nothing was tried
    /// yet), or after `connectionWait` at most: `Status`, `Settings` and `PlaySound` answer then.
    func whenSettled(_ body: @escaping () -> Void) {
        connectIfNeeded()
        guard case .connecting = serverState else { return body() }
        settleWaiters.append(body)
    }

    private func settled() {
        let waiting = settleWaiters
        settleWaiters.removeAll()
        for body in waiting { body() }
    }

    /// Whether chime plays an alarm's sound itself through the sound server (or is about to find
    /// out, the libraries being there): the popup then carries no sound for the notification server
    /// to play.
    var playsItself: Bool {
        switch serverState {
        case .unavailable: false
        case .connecting, .connected: true
        case .untried: SoundServer.librariesAvailable
        }
    }

    /// The sound server chime plays through ("pulseaudio 16.1"), while connected.
    var soundServerName: String? {
        if case .connected(let name) = serverState { return name }
        return nil
    }

    /// How sounds are played, for `chime status`.
    var statusText: String {
        let fallback = player.map { "\($0.name) plays them (no volume, fade or insist)" } ?? "the notification server plays them where it can (no player program was found)"
        switch serverState {
        case .connected(let name): return "played by chime through the sound server (\(name)), with volume, fade and insist"
        case .untried: return "chime connects to the sound server at the first sound"
        case .connecting: return "connecting to the sound server"
        case .unavailable(let why, _): return "no sound server (\(why)): \(fallback)"
        }
    }

    // MARK: - Playing

    /// Plays `request`: its number, for `stop`.
    func play(_ request: SoundRequest) -> Int {
        lastPlay += 1
        let id = lastPlay
        plays[id] = Play(request: request, started: clock.now())
        start(id)
        return id
    }

    /// Starts a play the best way there is now.
    private func start(_ id: Int) {
        guard var play = plays[id] else { return }
        connectIfNeeded()
        finishOpening()
        if let server, playsItself {
            if let file = Self.file(for: play.request.sound) {
                do {
                    let options = PlaybackOptions(volume: play.request.volume, fade: Double(play.request.fade.nanoseconds) / 1e9,
                                                  fadeFrom: Double(play.request.fadeFrom) / 100, looping: play.request.looping,
                                                  title: play.request.title)
                    play.playback = try server.play(file, options)
                    plays[id] = play
                    logger.debug("asked the sound server to play \(file)", metadata: ["sound.title": "\(play.request.title)"])
                    return
                } catch {
                    logger.warning("chime cannot play \(file) itself (\(error.message)); trying \(player?.name ?? "a player program")")
                }
            }
        }
        startPlayer(id)
    }

    /// Whether the sound server, found missing a while ago, is to be tried again.
    private var retryDue: Bool {
        guard case .unavailable(_, let since) = serverState, since != .distantFuture else { return false }
        return clock.now() >= since + Self.retryServer
    }

    /// The file a sound stands for: a theme name through the freedesktop sound theme.
    static func file(for sound: Sound) -> String? {
        switch sound {
        case .default: soundThemeFile(named: Sound.defaultName)
        case .named(let name): soundThemeFile(named: name)
        case .file(let path): path
        }
    }

    /// Stops a play: its ramp to silence, or its player killed.
    func stop(_ id: Int) {
        guard var play = plays[id] else { return }
        play.stopping = true
        plays[id] = play
        if let pid = play.player { children.stop(pid) }
        if let playback = play.playback {
            server?.stop(playback)  // `ended` comes back; the play is forgotten then
        } else {
            finish(id)
        }
    }

    /// A play is over: forgotten, and an output raised for it put back if no insisting sound is left.
    private func finish(_ id: Int, how: String = "finished") {
        guard let play = plays.removeValue(forKey: id) else { return }
        if previews.remove(id) != nil {
            if id == previewPlay {
                previewPlay = nil
                previewUntil = nil
            }
            let note = play.output.flatMap { $0.isSilent ? "the output \($0.sink) is \($0.muted ? "muted" : "at 0%")" : nil } ?? ""
            events.previewEnded(id, play.stopping && how == "finished" ? "stopped" : how, note)
        } else if !play.stopping {
            events.ended(id)
        }
        if play.request.insist { restoreOutputs() }
    }

    // MARK: - Previews

    /// The preview playing (the app's Preview button, `chime sound play`): one at a time.
    private(set) var previewPlay: Int?
    /// Every preview not yet ended (one stopped for the next still tells its end: `SoundEnded`).
    private var previews: Set<Int> = []
    private var previewUntil: Instant?
    /// The way the last preview plays: "the sound server (NAME)" or the player program's name.
    private(set) var previewWay = ""

    /// Plays `sound` as an alarm would, once or (`duration`) looping for that long; a preview still
    /// playing stops first. Throws why nothing can play it. Returns its number and how long it lasts.
    func preview(_ sound: Sound, volume: Int = 100, fade: TimeSpan = .zero, for duration: TimeSpan? = nil) throws(PreviewError) -> (play: Int, length: TimeSpan) {
        if let previewPlay { stop(previewPlay) }
        previewPlay = nil
        connectIfNeeded()
        finishOpening()
        let file = Self.file(for: sound)
        var length = duration ?? .zero
        if playsItself, let file {
            do {
                if duration == nil { length = TimeSpan(nanoseconds: Int64(try SoundServer.duration(of: file) * 1e9)) }
            } catch {
                throw PreviewError(message: error.message)
            }
        } else {
            guard let player else {
                throw PreviewError(message: "no sound server and no player program (\(soundPlayers.joined(separator: ", "))) here; the notification server plays alarms' sounds itself")
            }
            if let why = sound.whyUnplayable(with: .localPlayer(name: player.name, path: player.path)) { throw PreviewError(message: why) }
            if let file, duration == nil, let seconds = try? SoundServer.duration(of: file) { length = TimeSpan(nanoseconds: Int64(seconds * 1e9)) }
        }
        let id = play(SoundRequest(sound: sound, volume: volume, fade: fade, looping: duration != nil, title: "chime: preview"))
        guard let started = plays[id] else { throw PreviewError(message: "\(player?.name ?? "the player") could not play it") }
        if started.playback != nil {
            if case .connected(let name) = serverState { previewWay = "the sound server (\(name))" } else { previewWay = "the sound server" }
        } else {
            previewWay = player?.name ?? ""
        }
        previewPlay = id
        previews.insert(id)
        previewUntil = duration.map { clock.now() + $0 }
        return (id, length)
    }

    /// Stops preview `id` (if it still plays).
    func stopPreview(_ id: Int) {
        guard previewPlay == id else { return }
        stop(id)
    }

    // MARK: - Player programs

    /// Starts the player for a play; one that could not start (its file being replaced, say) is
    /// tried again a second later, up to `playerStartAttempts` times in a row.
    private func startPlayer(_ id: Int) {
        guard var play = plays[id] else { return }
        play.playback = nil
        play.nextStart = nil
        guard let player else {
            logger.warning("no sound server and no player program (\(soundPlayers.joined(separator: ", "))): the sound is not played")
            plays[id] = play
            return finish(id)
        }
        let (name, isFile): (String, Bool) = switch play.request.sound {
        case .default: (Sound.defaultName, false)
        case .named(let name): (name, false)
        case .file(let path): (path, true)
        }
        guard var arguments = playerArguments(player: player, sound: name, isFile: isFile) else {
            logger.warning("\(player.name) cannot play the sound \(name)")
            plays[id] = play
            return finish(id)
        }
        arguments.insert(contentsOf: Self.volumeArguments(player.name, play.request.volume), at: 1)
        do throws(SpawnError) {
            play.player = try children.start(arguments, timeLimit: playerTimeLimit) { [weak self] child in
                self?.playerEnded(id, succeeded: child.succeeded, ending: child.ending)
            }
            play.playerStarts += 1
            play.failedStarts = 0
            plays[id] = play
        } catch {
            logger.warning("\(error)")
            play.failedStarts += 1
            if play.failedStarts < Self.playerStartAttempts {
                play.nextStart = clock.now() + Self.smallestReplay
                plays[id] = play
            } else {
                plays[id] = play
                finish(id)
            }
        }
    }

    /// The player's own volume option for `percent` (canberra-gtk-play takes decibels, paplay the
    /// server's scale); none for the others.
    static func volumeArguments(_ player: String, _ percent: Int) -> [String] {
        guard percent < 100 else { return [] }
        let fraction = Double(max(1, percent)) / 100
        switch player {
        case "canberra-gtk-play": return ["--volume=\((60 * log10(fraction) * 10).rounded() / 10)"]
        case "paplay": return ["--volume=\(Int(Double(Output.norm) * fraction))"]
        default: return []
        }
    }

    /// A player ended: a looping sound starts again (unless the player failed, which would only
    /// fail again); a sound played once is done.
    private func playerEnded(_ id: Int, succeeded: Bool, ending: String) {
        guard var play = plays[id] else { return }
        play.player = nil
        if play.stopping { return finish(id) }
        guard play.request.looping, succeeded else {
            if !succeeded { logger.warning("the sound player failed (\(ending))") }
            plays[id] = play
            return finish(id)
        }
        play.nextStart = max(clock.now(), play.started + Self.smallestReplay * Int64(play.playerStarts))
        plays[id] = play
    }

    // MARK: - The loop

    var descriptors: [Int32] { (server.map { [$0.wakeup.fd] } ?? []) + (opening.map { [$0.done.fd] } ?? []) }

    var deadline: Instant? {
        var times = plays.values.compactMap(\.nextStart) + (previewUntil.map { [$0] } ?? [])
        if case .connecting(let since) = serverState, !settleWaiters.isEmpty { times.append(since + Self.connectionWait) }
        return times.min()
    }

    func deadlineReached(now: Instant) {
        if case .connecting(let since) = serverState, since + Self.connectionWait <= now { settled() }
        for (id, play) in plays where (play.nextStart ?? .distantFuture) <= now && !play.stopping { startPlayer(id) }
        if let until = previewUntil, until <= now {
            previewUntil = nil
            if let previewPlay { stop(previewPlay) }
        }
    }

    func readable(_ fd: Int32) {
        if fd == opening?.done.fd { return finishOpening() }
        guard let server else { return }
        for event in server.takeEvents() { handle(event) }
    }

    private func handle(_ event: SoundEvent) {
        switch event {
        case .connected(let name):
            serverState = .connected(name)
            logger.info("chime plays sounds itself through the sound server (\(name))")
            // From now on a decoder waits, started, for the next sound's file.
            SoundServer.keepSpareDecoder = true
            settled()
            restoreOutputs()
        case .unavailable(let why):
            if case .unavailable = serverState {} else {
                logger.info("no sound server (\(why)); \(player?.name ?? "no player program") plays sounds")
            }
            serverState = .unavailable(why, since: clock.now())
            // Outputs being put back are tried again when the server is back.
            restoring.removeAll()
            puttingBack.removeAll()
            settled()
        case .started(let playback):
            guard let play = plays.values.first(where: { $0.playback == playback }) else { return }
            logger.debug("the sound server began playing \((clock.now() - play.started).milliseconds) ms after it was asked",
                         metadata: ["sound.title": "\(play.request.title)"])
        case .playingOn(let playback, let output):
            guard let (id, play) = plays.first(where: { $0.value.playback == playback }) else { return }
            plays[id]?.output = output
            if play.request.insist {
                raise(output)
            } else if output.isSilent, !play.stopping {
                events.silent(id, output)
            }
        case .ended(let playback, let ending):
            guard let (id, play) = plays.first(where: { $0.value.playback == playback }) else { return }
            switch ending {
            case .finished, .stopped:
                finish(id, how: Self.describe(ending))
            case .failed(let why):
                logger.warning("\(why)")
                if play.stopping { return finish(id, how: Self.describe(ending)) }
                startPlayer(id)  // the rest of the ring through a player program
            case .undecodable(let why):
                // The file crashed or hung its decoder (a process of its own): the ring goes on
                // with the default sound, or (that one failing too) a player program.
                logger.warning("\(why)")
                if play.stopping { return finish(id, how: Self.describe(ending)) }
                plays[id]?.playback = nil
                if play.request.sound != .default {
                    plays[id]?.request.sound = .default
                    start(id)
                } else {
                    startPlayer(id)
                }
            }
        case .output(let sink, let current):
            putBack(sink, current: current)
        case .outputSet(let sink, let error):
            if let error { logger.warning("could not set the output \(sink): \(error)") }
            guard puttingBack.remove(sink) != nil else { return }
            if error == nil {
                raised[sink] = nil
                do { try store.removeRaisedOutput(sink) } catch { logger.error("\(error)") }
            }
        }
    }

    static func describe(_ ending: Ending) -> String {
        switch ending {
        case .finished: "finished"
        case .stopped: "stopped"
        case .failed(let why), .undecodable(let why): "failed: \(why)"
        }
    }

    // MARK: - Insisting

    /// At start: outputs a killed daemon left raised are put back once the server answers (unless
    /// an insisting ring resumed meanwhile).
    func resume() {
        do {
            for output in try store.raisedOutputs() { raised[output.sink] = output }
        } catch {
            logger.error("\(error)")
        }
        if !raised.isEmpty {
            connectIfNeeded()  // put back once the server answers
            restoreOutputs()
        }
    }

    /// Unmutes and raises `output` to 100% (each channel at least), what it was stored first.
    private func raise(_ output: Output) {
        let louder = Output(sink: output.sink, muted: false, volumes: output.volumes.map { max($0, Output.norm) })
        guard louder != output else { return }
        if raised[output.sink] == nil {
            let record = RaisedOutput(sink: output.sink, muted: output.muted, volumes: output.volumes, raisedVolumes: louder.volumes)
            do {
                try store.write(.firing) { () throws(StoreError) in try store.setRaisedOutput(record) }
            } catch {
                // Not stored, not touched: what cannot be put back after a crash is not changed.
                logger.error("\(error); the output \(output.sink) is left as it is")
                return
            }
            raised[output.sink] = record
        }
        logger.info("insist: the output \(output.sink) was \(output.muted ? "muted" : "at \(output.percent)%"); unmuted and raised to 100% for the ring")
        server?.setOutput(louder)
    }

    /// Puts raised outputs back when no insisting sound plays: each is read first.
    private func restoreOutputs() {
        guard !plays.values.contains(where: { $0.request.insist && !$0.stopping }), case .connected = serverState, let server else { return }
        for sink in raised.keys where !restoring.contains(sink) {
            restoring.insert(sink)
            server.readOutput(sink)
        }
    }

    /// The output's state is known: put back as it was if it is still as chime left it.
    private func putBack(_ sink: String, current: Output?) {
        restoring.remove(sink)
        guard let record = raised[sink] else { return }
        guard !plays.values.contains(where: { $0.request.insist && !$0.stopping }) else { return }  // an insisting sound started meanwhile
        if let current {
            if !current.muted, current.volumes == record.raisedVolumes {
                let original = Output(sink: sink, muted: record.muted, volumes: record.volumes)
                puttingBack.insert(sink)
                server?.setOutput(original)
                logger.info("insist: the output \(sink) is put back (\(record.muted ? "muted" : "at \(original.percent)%"))")
                return  // forgotten once the server confirms
            } else {
                logger.info("insist: the output \(sink) was changed during the ring; it is left as it is now")
            }
        } else {
            logger.info("insist: the output \(sink) is gone; nothing to put back")
        }
        raised[sink] = nil
        do { try store.removeRaisedOutput(sink) } catch { logger.error("\(error)") }
    }
}

/// `chime daemon --decode-sound PATH [--loop]`: the decoder of one sound file, in a process of its
/// own (Sound/DecodedSound.swift); the process's exit status.
public func runSoundDecoder(path: String, looping: Bool) -> Int32 {
    SoundDecoder.run(path: path, looping: looping)
}
