// What a notification says: Apple's UNNotificationContent and its parts, mapped onto chime's
// NotificationContent (ChimeCenter), the one model the command line and the daemon use too.
import ChimeCenter
import Foundation
import Notifications

/// The name of a sound: a file name (`bell.mp3`) or a freedesktop sound-theme name (`bell`).
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// A sound to play with a notification.
///
/// On Linux, `default` is the freedesktop theme's `alarm-clock-elapsed`. A named sound is looked for
/// as a file: an absolute path as it is, else in the program's bundle resources, the working
/// directory, `~/.local/share/sounds` and `$XDG_DATA_DIRS/sounds`; a name found nowhere is taken
/// as a sound-theme name without its extension (`bell.mp3` plays the theme's `bell`). chime's daemon
/// plays it through the sound server where one runs, else a player program or the notification
/// server does.
///
/// A critical sound is what Apple's critical alerts are: heard even on a muted device. chime's
/// daemon unmutes and raises the output for it and puts it back afterwards (the request's `insist`);
/// its audio volume (0.0-1.0) is the sound's own volume (`volume`, 1-100 percent).
open class UNNotificationSound: NSObject, @unchecked Sendable {
    let sound: Sound
    /// Heard even where the output is muted or turned down (chime's `insist`; not in Apple's API).
    public let critical: Bool
    /// The sound's own volume in percent, 1-100 (nil: as recorded; not in Apple's API).
    public let volume: Int?

    init(_ sound: Sound, critical: Bool = false, volume: Int? = nil) {
        self.sound = sound
        self.critical = critical
        self.volume = volume
    }

    /// An audio volume (0.0-1.0) as chime's percent (1-100: silence is no alarm).
    static func percent(_ volume: Float) -> Int {
        guard volume.isFinite else { return 100 }
        return max(1, Int((min(1, max(0, volume)) * 100).rounded()))
    }

    /// The default notification sound.
    public static var `default`: UNNotificationSound { UNNotificationSound(.default) }
    /// The default sound, heard even on a muted device.
    public static var defaultCritical: UNNotificationSound { UNNotificationSound(.default, critical: true) }
    /// The default sound at `volume` (0.0-1.0), heard even on a muted device.
    public static func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(.default, critical: true, volume: percent(volume))
    }
    public static var defaultRingtone: UNNotificationSound { UNNotificationSound(.default) }

    public convenience init(named name: UNNotificationSoundName) {
        self.init(Self.resolve(name.rawValue))
    }

    /// A named sound, heard even on a muted device.
    public static func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(resolve(name.rawValue), critical: true)
    }
    /// A named sound at `volume` (0.0-1.0), heard even on a muted device.
    public static func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(resolve(name.rawValue), critical: true, volume: percent(volume))
    }
    public static func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound { UNNotificationSound(named: name) }

    static func resolve(_ name: String) -> Sound {
        if name.hasPrefix("/") { return .file(name) }
        let fileManager = FileManager.default
        var places: [String] = []
        if let resources = Bundle.main.resourcePath { places.append(resources) }
        places.append(fileManager.currentDirectoryPath)
        let environment = ProcessInfo.processInfo.environment
        let dataHome = environment["XDG_DATA_HOME"] ?? (NSHomeDirectory() + "/.local/share")
        places.append(dataHome + "/sounds")
        for directory in (environment["XDG_DATA_DIRS"] ?? "/usr/local/share:/usr/share").split(separator: ":") {
            places.append(String(directory) + "/sounds")
        }
        for place in places where !name.contains("/") || place == fileManager.currentDirectoryPath {
            let candidate = URL(fileURLWithPath: place).appendingPathComponent(name).standardizedFileURL.path
            if fileManager.isReadableFile(atPath: candidate) { return .file(candidate) }
        }
        let theme = (name as NSString).deletingPathExtension
        return theme.isEmpty || theme.contains("/") ? .default : .named(theme)
    }

    /// The chime sound this stands for.
    public var chimeSound: Sound { sound }

    /// The same sound, as critical, at the same volume.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationSound else { return false }
        return sound == other.sound && critical == other.critical && volume == other.volume
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(sound)
        hasher.combine(critical)
        hasher.combine(volume)
        return hasher.finalize()
    }
}

/// How urgently a notification asks for attention: mapped to the notification spec's urgency.
public enum UNNotificationInterruptionLevel: UInt, Sendable {
    /// Low urgency (GNOME Shell shows it in its list only).
    case passive = 0
    /// Normal urgency.
    case active = 1
    /// Critical urgency: shown through do-not-disturb where the server lets critical through.
    case timeSensitive = 2
    /// Critical urgency.
    case critical = 3

    var urgency: Urgency {
        switch self {
        case .passive: .low
        case .active: .normal
        case .timeSensitive, .critical: .critical
        }
    }

    init(_ urgency: Urgency) {
        switch urgency {
        case .low: self = .passive
        case .critical: self = .timeSensitive
        default: self = .active
        }
    }
}

/// A file shown with a notification. Images (PNG, JPEG, GIF, SVG, BMP, WebP) are shown as the
/// notification's image where the server shows images; other kinds (audio, video) are refused with
/// `UNError.Code.attachmentUnrecognizedType`, predictably, as no Linux server plays them.
open class UNNotificationAttachment: NSObject, @unchecked Sendable {
    public let identifier: String
    public let url: URL
    public let type: String

    static let imageTypes = ["png": "public.png", "jpg": "public.jpeg", "jpeg": "public.jpeg", "gif": "com.compuserve.gif",
                             "svg": "public.svg-image", "bmp": "com.microsoft.bmp", "webp": "org.webmproject.webp"]

    public init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL else { throw UNError(.attachmentInvalidURL, "\(url) is not a file URL") }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw UNError(.attachmentInvalidURL, "\(url.path) cannot be read")
        }
        guard let type = Self.imageTypes[url.pathExtension.lowercased()] else {
            throw UNError(.attachmentUnrecognizedType, "\(url.lastPathComponent): only images can be shown with a notification on Linux")
        }
        self.identifier = identifier.isEmpty ? UUID().uuidString : identifier
        self.url = url
        self.type = type
    }
}

/// What a notification says. Read-only; `UNMutableNotificationContent` sets it.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    var _title = ""
    var _subtitle = ""
    var _body = ""
    var _badge: NSNumber?
    var _sound: UNNotificationSound?
    var _userInfo: [AnyHashable: Any] = [:]
    var _categoryIdentifier = ""
    var _threadIdentifier = ""
    var _attachments: [UNNotificationAttachment] = []
    var _launchImageName = ""
    var _targetContentIdentifier: String?
    var _interruptionLevel: UNNotificationInterruptionLevel = .active
    var _relevanceScore: Double = 0
    var _summaryArgument = ""
    var _summaryArgumentCount = 0

    public override init() {}

    open var title: String { _title }
    open var subtitle: String { _subtitle }
    open var body: String { _body }
    /// App badges do not exist on the Linux desktop: kept, never shown.
    open var badge: NSNumber? { _badge }
    open var sound: UNNotificationSound? { _sound }
    /// Kept with the request; values are stored as text (strings, numbers and booleans; others are dropped).
    open var userInfo: [AnyHashable: Any] { _userInfo }
    open var categoryIdentifier: String { _categoryIdentifier }
    open var threadIdentifier: String { _threadIdentifier }
    open var attachments: [UNNotificationAttachment] { _attachments }
    open var launchImageName: String { _launchImageName }
    open var targetContentIdentifier: String? { _targetContentIdentifier }
    open var interruptionLevel: UNNotificationInterruptionLevel { _interruptionLevel }
    open var relevanceScore: Double { _relevanceScore }
    open var summaryArgument: String { _summaryArgument }
    open var summaryArgumentCount: Int { _summaryArgumentCount }

    func copyFields(to other: UNNotificationContent) {
        other._title = _title
        other._subtitle = _subtitle
        other._body = _body
        other._badge = _badge
        other._sound = _sound
        other._userInfo = _userInfo
        other._categoryIdentifier = _categoryIdentifier
        other._threadIdentifier = _threadIdentifier
        other._attachments = _attachments
        other._launchImageName = _launchImageName
        other._targetContentIdentifier = _targetContentIdentifier
        other._interruptionLevel = _interruptionLevel
        other._relevanceScore = _relevanceScore
        other._summaryArgument = _summaryArgument
        other._summaryArgumentCount = _summaryArgumentCount
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = UNNotificationContent()
        copyFields(to: copy)
        return copy
    }

    open func mutableCopy(with zone: NSZone? = nil) -> Any {
        let copy = UNMutableNotificationContent()
        copyFields(to: copy)
        return copy
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        return title == other.title && subtitle == other.subtitle && body == other.body && categoryIdentifier == other.categoryIdentifier
            && threadIdentifier == other.threadIdentifier && interruptionLevel == other.interruptionLevel
            && sound == other.sound && NSDictionary(dictionary: userInfo).isEqual(to: other.userInfo)
    }
}

/// Content to fill in before a request is added.
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    open override var title: String { get { _title } set { _title = newValue } }
    open override var subtitle: String { get { _subtitle } set { _subtitle = newValue } }
    open override var body: String { get { _body } set { _body = newValue } }
    open override var badge: NSNumber? { get { _badge } set { _badge = newValue } }
    open override var sound: UNNotificationSound? { get { _sound } set { _sound = newValue } }
    open override var userInfo: [AnyHashable: Any] { get { _userInfo } set { _userInfo = newValue } }
    open override var categoryIdentifier: String { get { _categoryIdentifier } set { _categoryIdentifier = newValue } }
    open override var threadIdentifier: String { get { _threadIdentifier } set { _threadIdentifier = newValue } }
    open override var attachments: [UNNotificationAttachment] { get { _attachments } set { _attachments = newValue } }
    open override var launchImageName: String { get { _launchImageName } set { _launchImageName = newValue } }
    open override var targetContentIdentifier: String? { get { _targetContentIdentifier } set { _targetContentIdentifier = newValue } }
    open override var interruptionLevel: UNNotificationInterruptionLevel { get { _interruptionLevel } set { _interruptionLevel = newValue } }
    open override var relevanceScore: Double { get { _relevanceScore } set { _relevanceScore = newValue } }
    open override var summaryArgument: String { get { _summaryArgument } set { _summaryArgument = newValue } }
    open override var summaryArgumentCount: Int { get { _summaryArgumentCount } set { _summaryArgumentCount = newValue } }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = UNMutableNotificationContent()
        copyFields(to: copy)
        return copy
    }
}
