import DBus
import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// What an application asks to be allowed to do, as `UNAuthorizationOptions`.
public struct AuthorizationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let alert = AuthorizationOptions(rawValue: 1)
    public static let sound = AuthorizationOptions(rawValue: 2)
    public static let badge = AuthorizationOptions(rawValue: 4)
    public static let actions = AuthorizationOptions(rawValue: 8)
}

/// Whether a feature is available here.
public enum Setting: Hashable, Sendable, Codable {
    case enabled
    case notSupported
}

/// How sounds will be played, if at all.
public enum SoundSetting: Hashable, Sendable, Codable {
    /// The notification server plays them (it has the `sound` capability).
    case byServer
    /// chime plays them itself with this local player.
    case localPlayer(name: String, path: String)
    /// chime plays them itself through the sound server (its name and version), with each alarm's
    /// volume and fade.
    case soundServer(String)
    /// Neither can.
    case notSupported
}

/// `UNNotificationSettings` for the freedesktop desktop, read from the live server.
public struct NotificationSettings: Hashable, Sendable, Codable {
    public enum Status: Hashable, Sendable, Codable {
        case authorized
        /// No notification server could be reached; the reason says why.
        case denied(reason: String)
    }

    public var authorizationStatus: Status
    public var alert: Setting
    public var sound: SoundSetting
    public var actions: Setting
    public var bodyMarkup: Setting
    public var hyperlinks: Setting
    public var images: Setting
    public var persistence: Setting
    /// App badges do not exist on the freedesktop desktop.
    public var badge: Setting { .notSupported }
    /// The server's name, vendor, version and spec version; nil when none runs.
    public var server: ServerInformation?
    /// Every capability the server advertises, in its order.
    public var capabilities: [Capability]
    /// The server's do-not-disturb, as iOS shows Focus: on, off, or nil where the server does not say.
    public var doNotDisturb: Bool? = nil
    /// Where that was read ("dunst is paused", "GNOME's do-not-disturb is off (show-banners true)").
    public var doNotDisturbSource: String = ""

    public var isAuthorized: Bool { authorizationStatus == .authorized }
}

/// The local sound players chime looks for, in order of preference.
public let soundPlayers = ["canberra-gtk-play", "pw-play", "paplay", "aplay"]

/// The first sound player on `PATH` (or the standard directories), with its path.
public func findSoundPlayer(path: String? = nil) -> (name: String, path: String)? {
    let search = path ?? Sys.environment("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
    for name in soundPlayers {
        for directory in search.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if Sys.isExecutable(candidate) { return (name, candidate) }
        }
    }
    return nil
}

/// Reads the settings from the notification server on `connection`: the
/// capabilities are the authorization.
public func notificationSettings(connection: Connection, playerSearchPath: String? = nil) throws -> NotificationSettings {
    let client = NotificationClient(connection: connection, timeout: .milliseconds(5000))
    let player = findSoundPlayer(path: playerSearchPath)
    do {
        return NotificationSettings(capabilities: try client.capabilities(), server: try client.serverInformation(), player: player)
    } catch let error as NoNotificationServerError {
        return NotificationSettings(deniedBecause: "\(error)")
    }
}

extension NotificationSettings {
    /// The settings a server with these capabilities gives, with `player` playing sounds where it does not.
    public init(capabilities: [Capability], server: ServerInformation, player: (name: String, path: String)?) {
        func has(_ c: Capability) -> Setting { capabilities.contains(c) ? .enabled : .notSupported }
        let local: SoundSetting = player.map { .localPlayer(name: $0.name, path: $0.path) } ?? .notSupported
        self.init(
            authorizationStatus: .authorized, alert: .enabled, sound: capabilities.contains(.sound) ? .byServer : local,
            actions: has(.actions), bodyMarkup: has(.bodyMarkup), hyperlinks: has(.bodyHyperlinks), images: has(.bodyImages),
            persistence: has(.persistence), server: server, capabilities: capabilities)
    }

    /// Nothing is authorized, and why (no server, or one that does not answer).
    public init(deniedBecause reason: String) {
        self.init(
            authorizationStatus: .denied(reason: reason), alert: .notSupported, sound: .notSupported,
            actions: .notSupported, bodyMarkup: .notSupported, hyperlinks: .notSupported, images: .notSupported,
            persistence: .notSupported, server: nil, capabilities: [])
    }
}

/// `requestAuthorization(options:)`: granted when every asked-for option is
/// available from the live server (badges never are on this desktop).
public func requestAuthorization(options: AuthorizationOptions, connection: Connection) throws -> (granted: Bool, settings: NotificationSettings) {
    let settings = try notificationSettings(connection: connection)
    guard settings.isAuthorized else { return (false, settings) }
    var granted = true
    if options.contains(.sound), settings.sound == .notSupported { granted = false }
    if options.contains(.actions), settings.actions != .enabled { granted = false }
    if options.contains(.badge) { granted = false }
    return (granted, settings)
}

/// The file a freedesktop sound-theme name stands for (`bell` →
/// `/usr/share/sounds/freedesktop/stereo/bell.oga`), searched in `$XDG_DATA_DIRS`.
public func soundThemeFile(named name: String) -> String? {
    guard !name.contains(Character("/")), !name.isEmpty else { return nil }
    for directory in soundThemeDirectories() {
        for ext in ["oga", "ogg", "wav"] {
            let candidate = "\(directory)/\(name).\(ext)"
            if Sys.isReadable(candidate) { return candidate }
        }
    }
    return nil
}

/// Where the freedesktop sound theme's sounds are, as the sound theme specification has it:
/// `sounds/freedesktop/stereo` in `$XDG_DATA_HOME` (a person's own, first), then in each of
/// `$XDG_DATA_DIRS`, in order.
func soundThemeDirectories() -> [String] {
    soundDataRoots().map { "\($0)/sounds/freedesktop/stereo" }
}

/// The data directories sounds are found in: `$XDG_DATA_HOME` (else `~/.local/share`), then each of
/// `$XDG_DATA_DIRS` (else `/usr/local/share:/usr/share`), absolute paths only.
public func soundDataRoots() -> [String] {
    let home = Sys.environment("XDG_DATA_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
        ?? Sys.environment("HOME").flatMap { $0.hasPrefix("/") ? $0 + "/.local/share" : nil }
    let dataDirectories = Sys.environment("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
    return (home.map { [$0] } ?? []) + dataDirectories.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
}

/// The freedesktop sound theme's sounds that suit an alarm or a timer, those installed here, in
/// this order (the theme's other sounds, `audio-channel-front-left` and the like, are not for waking).
public func alarmSoundNames() -> [String] {
    let installed = Set(soundThemeNames())
    return ["alarm-clock-elapsed", "bell", "complete", "message", "message-new-instant", "phone-incoming-call",
            "phone-outgoing-calling", "service-login", "dialog-information", "dialog-warning"].filter(installed.contains)
}

/// The freedesktop sound theme's sounds installed here (`bell`, `alarm-clock-elapsed`, ...),
/// sorted, each once: what an alarm's `sound` may name.
public func soundThemeNames() -> [String] {
    var names = Set<String>()
    for directory in soundThemeDirectories() {
        for file in Sys.directoryEntries(directory) {
            for ext in [".oga", ".ogg", ".wav"] where file.hasSuffix(ext) {
                names.insert(String(file.dropLast(ext.count)))
            }
        }
    }
    return names.sorted()
}

/// The argument vector that plays `sound` with `player` (name and path), or nil
/// when that player cannot play it (no file for a theme name, aplay and a non-WAV file).
public func playerArguments(player: (name: String, path: String), sound: String, isFile: Bool) -> [String]? {
    if player.name == "canberra-gtk-play" {
        return isFile ? [player.path, "-f", sound] : [player.path, "-i", sound]
    }
    guard let file = isFile ? sound : soundThemeFile(named: sound) else { return nil }
    if player.name == "aplay", !file.hasSuffix(".wav") { return nil }
    return [player.path, file]
}

extension Sound {
    /// Why nothing here can play this sound with `settings`, or nil when something can: the server
    /// plays it, or the local player finds it (a theme name needs its file for all but canberra-gtk-play;
    /// aplay plays only WAV).
    public func whyUnplayable(with sound: SoundSetting) -> String? {
        let (name, isFile): (String, Bool) = switch self {
        case .default: (Sound.defaultName, false)
        case .named(let name): (name, false)
        case .file(let path): (path, true)
        }
        switch sound {
        case .byServer: return nil
        case .soundServer:
            if isFile || soundThemeFile(named: name) != nil { return nil }
            return "no \(name).oga, .ogg or .wav in a sounds/freedesktop/stereo directory of $XDG_DATA_HOME or $XDG_DATA_DIRS"
        case .notSupported:
            return "the notification server plays no sounds and no player was found (\(soundPlayers.joined(separator: ", ")))"
        case .localPlayer(let player, let path):
            if playerArguments(player: (player, path), sound: name, isFile: isFile) != nil { return nil }
            if player == "aplay", isFile || soundThemeFile(named: name) != nil { return "aplay, the only player here, plays WAV files only" }
            return "the server plays no sounds, and \(player) needs a file: no \(name).oga, .ogg or .wav in a sounds/freedesktop/stereo directory of $XDG_DATA_DIRS"
        }
    }
}
