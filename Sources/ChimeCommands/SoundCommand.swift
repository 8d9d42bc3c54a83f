import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import DBus
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// `chime sound`: try a sound before an alarm depends on it, and see which there are.
public struct SoundCommand: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "sound",
        abstract: "Play a sound as an alarm would, or list the sounds an alarm may name.",
        subcommands: [SoundPlay.self, SoundList.self])
}

/// `chime sound play NAME|FILE`: plays through the daemon, the way its alarms play.
public struct SoundPlay: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a sound as an alarm would: chime sound play bell --volume 70 --fade 10s --for 30s",
        discussion: """
            The daemon plays it the way it plays its alarms (the app's Preview button does the same): \
            through the sound server with the volume and the fade, looping without a break for \
            --for, or, where no sound server runs, with a player program (without volume or fade). \
            Waits until the sound ends; Ctrl-C stops it. Says so when the output it played on is \
            muted. Needs `chime daemon` (D-Bus activation starts it where installed).

            Exits 0 once it has played, 66 when it cannot be played here (with the reason), 64 for \
            a bad option, 67 when no daemon runs.

            Examples:
              chime sound play bell
              chime sound play ~/wake.ogg --volume 70 --fade 30s --for 1m
              chime sound list
            """)

    @Argument(help: ArgumentHelp("A sound-theme name (bell, alarm-clock-elapsed, default) or a sound file.", valueName: "NAME|FILE"))
    var sound: String

    @Option(help: ArgumentHelp("The sound's own volume, 1-100 percent of the file as recorded (default 100).", valueName: "PERCENT"))
    var volume: String?

    @Option(help: ArgumentHelp("How long it takes to rise from silence to its volume, e.g. 10s.", valueName: "DURATION"))
    var fade: String?

    @Option(name: .customLong("for"), help: ArgumentHelp("Loop it for this long, as a ringing alarm would (default: play it once).", valueName: "DURATION"))
    var duration: String?

    public func run() throws {
        var name = sound
        if sound.contains(Character("/")) {
            do { name = try NotifyRunner.soundFilePath(sound) } catch { ExitStatus.cannotPlay.exit("\(sound): no readable sound file there") }
        }
        var percent: Int?
        if let volume {
            guard let value = parsePercent(volume), RequestBounds.volume.contains(value) else {
                ExitStatus.usage.exit("--volume \(volume): give a percentage from 1 to 100, such as 70 or 70%")
            }
            percent = value
        }
        let fadeSpan = fade.map { ["0", "0s"].contains($0) ? TimeSpan.zero : AlarmOptions.duration($0, option: "--fade") }
        let length = duration.map { AlarmOptions.duration($0, option: "--for") }
        if let fadeSpan, !RequestBounds.fade.contains(fadeSpan) { ExitStatus.usage.exit("--fade \(fade ?? ""): at most 1h") }
        if let length, length > .seconds(3600) { ExitStatus.usage.exit("--for \(duration ?? ""): at most 1h") }

        let connection = reportingErrors { try openSessionBus() }
        let center = UserNotificationCenter(connection: connection)
        var ended: (how: String, note: String)?
        var play: UInt32?
        // Followed before the sound starts, so its end cannot slip past.
        _ = reportingErrors { try center.followSoundEnded { id, how, note in if id == play { ended = (how, note) } } }
        let signals = try? SignalDescriptor([SIGINT, SIGTERM])
        let started = reportingErrors { try center.playSound(name, volume: percent, fade: fadeSpan, for: length) }
        play = started.play
        let seconds = Double(started.length.milliseconds) / 1000
        printLine("playing \(sound) (\(seconds < 10 ? String(Double(Int(seconds * 10)) / 10) : String(Int(seconds))) s) through \(started.way)")
        let deadline = Deadline.now + .milliseconds(started.length.milliseconds) + .seconds(10)
        let result = connection.run(until: deadline, wakeOn: signals?.fd) { ended == nil }
        if result == .woken {
            try? center.stopSound(started.play)
            ExitStatus.interrupted.exit("stopped")
        }
        guard let ended else {
            ExitStatus.daemonFailed.exit("the daemon did not say the sound ended (\(result == .disconnected ? "the bus closed" : "it should have by now"))")
        }
        if ended.how.hasPrefix("failed") { ExitStatus.cannotPlay.exit(ended.how) }
        if !ended.note.isEmpty { printError("chime: nothing was heard: \(ended.note) (alarms with --insist unmute it)") }
    }
}

/// `chime sound list`: the sound-theme names an alarm's --sound may give.
public struct SoundList: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the sound theme's sounds an alarm may name (those for alarms first).")

    @Flag(help: "Every sound of the theme, not only those that suit an alarm.")
    var all = false

    public func run() throws {
        let names = all ? soundThemeNames() : alarmSoundNames()
        if names.isEmpty {
            ExitStatus.cannotPlay.exit("no freedesktop sound theme is installed (Debian: sound-theme-freedesktop); give a file instead")
        }
        for name in names { printLine(name) }
    }
}
