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
open class UNNotificationSound: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let sound: Sound
    /// Heard even where the output is muted or turned down (chime's `insist`; not in Apple's API).
    public let critical: Bool
    /// The sound's own volume in percent, 1-100 (nil: as recorded; not in Apple's API).
    public let volume: Int?

    /// The one initializer every other goes through; `required` so that the class methods can
    /// return `Self`, as Apple's do (hidden from the module's interface).
    @_spi(ChimeInternal) public required init(chimeSound sound: Sound, critical: Bool, volume: Int?) {
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
    open class var `default`: UNNotificationSound { UNNotificationSound(chimeSound: .default, critical: false, volume: nil) }
    /// The default sound, heard even on a muted device.
    open class var defaultCritical: UNNotificationSound { UNNotificationSound(chimeSound: .default, critical: true, volume: nil) }
    /// The default sound at `volume` (0.0-1.0), heard even on a muted device.
    open class func defaultCriticalSound(withAudioVolume volume: Float) -> Self {
        self.init(chimeSound: .default, critical: true, volume: percent(volume))
    }
    open class var defaultRingtone: UNNotificationSound { UNNotificationSound(chimeSound: .default, critical: false, volume: nil) }

    public convenience init(named name: UNNotificationSoundName) {
        self.init(chimeSound: Self.resolve(name.rawValue), critical: false, volume: nil)
    }

    /// A named sound, heard even on a muted device.
    open class func criticalSoundNamed(_ name: UNNotificationSoundName) -> Self {
        self.init(chimeSound: resolve(name.rawValue), critical: true, volume: nil)
    }
    /// A named sound at `volume` (0.0-1.0), heard even on a muted device.
    open class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> Self {
        self.init(chimeSound: resolve(name.rawValue), critical: true, volume: percent(volume))
    }
    open class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> Self {
        self.init(chimeSound: resolve(name.rawValue), critical: false, volume: nil)
    }

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

    /// The chime sound this stands for (not in Apple's API).
    public var chimeSound: Sound { sound }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        let (kind, name): (Int64, String) = switch sound {
        case .default: (0, "")
        case .named(let theme): (1, theme)
        case .file(let path): (2, path)
        }
        coder.encode(kind, forKey: "kind")
        coder.encode(name as NSString, forKey: "name")
        coder.encode(critical, forKey: "critical")
        coder.encode(Int64(volume ?? 0), forKey: "volume")
    }

    public required init?(coder: NSCoder) {
        let name = coder.decodeObject(of: NSString.self, forKey: "name") as String? ?? ""
        switch coder.decodeInt64(forKey: "kind") {
        case 1: sound = .named(name)
        case 2: sound = .file(name)
        default: sound = .default
        }
        critical = coder.decodeBool(forKey: "critical")
        let volume = coder.decodeInt64(forKey: "volume")
        self.volume = (1...100).contains(volume) ? Int(volume) : nil
    }

    /// Sounds are immutable: a copy is the sound itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

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
open class UNNotificationAttachment: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _identifier: String
    let _url: URL
    let _type: String

    open var identifier: String { _identifier }
    open var url: URL { _url }
    open var type: String { _type }

    static let imageTypes = ["png": "public.png", "jpg": "public.jpeg", "jpeg": "public.jpeg", "gif": "com.compuserve.gif",
                             "svg": "public.svg-image", "bmp": "com.microsoft.bmp", "webp": "org.webmproject.webp"]

    init(identifier: String, url: URL, type: String) {
        _identifier = identifier
        _url = url
        _type = type
    }

    /// An image file; `options` may say its type (`UNNotificationAttachmentOptionsTypeHintKey`), the
    /// other options (thumbnails) change nothing here.
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        guard URL.isFileURL else { throw UNError(.attachmentInvalidURL, "\(URL) is not a file URL") }
        guard FileManager.default.isReadableFile(atPath: URL.path) else {
            throw UNError(.attachmentInvalidURL, "\(URL.path) cannot be read")
        }
        let hinted = options?[UNNotificationAttachmentOptionsTypeHintKey] as? String
        guard let type = Self.imageTypes[URL.pathExtension.lowercased()] ?? hinted.flatMap({ Set(Self.imageTypes.values).contains($0) ? $0 : nil })
        else {
            throw UNError(.attachmentUnrecognizedType, "\(URL.lastPathComponent): only images can be shown with a notification on Linux")
        }
        self.init(identifier: identifier.isEmpty ? UUID().uuidString : identifier, url: URL, type: type)
    }

    @available(swift, obsoleted: 3, renamed: "init(identifier:url:options:)")
    public convenience init(identifier: String, URL: URL, options: [AnyHashable: Any]? = nil) throws {
        try self.init(identifier: identifier, url: URL, options: options)
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_identifier as NSString, forKey: "identifier")
        coder.encode(_url.path as NSString, forKey: "path")
        coder.encode(_type as NSString, forKey: "type")
    }

    public required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: "identifier") as String?,
            let path = coder.decodeObject(of: NSString.self, forKey: "path") as String?,
            let type = coder.decodeObject(of: NSString.self, forKey: "type") as String?
        else { return nil }
        _identifier = identifier
        _url = URL(fileURLWithPath: path)
        _type = type
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// An attachment's type, as a uniform type identifier (`public.png`, `public.jpeg`...).
public let UNNotificationAttachmentOptionsTypeHintKey = "UNNotificationAttachmentOptionsTypeHintKey"
/// Accepted and without effect: Linux servers show the image itself.
public let UNNotificationAttachmentOptionsThumbnailHiddenKey = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// Accepted and without effect: Linux servers show the image itself.
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey = "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// Accepted and without effect: Linux servers show the image itself.
public let UNNotificationAttachmentOptionsThumbnailTimeKey = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// What a communication notification's content is updated from (on Apple's platforms, an Intents
/// framework message or call intent). The Intents framework does not exist on Linux:
/// `UNNotificationContent.updating(from:)` refuses every provider.
public protocol UNNotificationContentProviding: NSObjectProtocol {}

/// What a notification says. Read-only; `UNMutableNotificationContent` sets it.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, NSSecureCoding, @unchecked Sendable {
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
    var _filterCriteria: String?
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
    /// Focus filters do not exist on the Linux desktop: kept, never used.
    open var filterCriteria: String? { _filterCriteria }
    @available(*, deprecated, message: "summaryArgument is ignored")
    open var summaryArgument: String { _summaryArgument }
    @available(*, deprecated, message: "summaryArgumentCount is ignored")
    open var summaryArgumentCount: Int { _summaryArgumentCount }

    /// Communication notifications need the Intents framework, which Linux does not have: always
    /// throws `UNError.Code.contentProvidingObjectNotAllowed`.
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        throw UNError(.contentProvidingObjectNotAllowed, "\(type(of: provider)): communication notifications (Intents) do not exist on Linux")
    }

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
        other._filterCriteria = _filterCriteria
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

    open class var supportsSecureCoding: Bool { true }

    /// Written as an archive of the content; `userInfo` keeps its text values (strings, numbers and
    /// booleans, as the daemon keeps them).
    open func encode(with coder: NSCoder) {
        for (key, text) in [("title", _title), ("subtitle", _subtitle), ("body", _body), ("categoryIdentifier", _categoryIdentifier),
                            ("threadIdentifier", _threadIdentifier), ("launchImageName", _launchImageName),
                            ("summaryArgument", _summaryArgument)] {
            coder.encode(text as NSString, forKey: key)
        }
        coder.encode(_targetContentIdentifier.map { $0 as NSString }, forKey: "targetContentIdentifier")
        coder.encode(_filterCriteria.map { $0 as NSString }, forKey: "filterCriteria")
        coder.encode(_badge, forKey: "badge")
        coder.encode(_sound, forKey: "sound")
        coder.encode(_attachments as NSArray, forKey: "attachments")
        coder.encode(Int64(_interruptionLevel.rawValue), forKey: "interruptionLevel")
        coder.encode(_relevanceScore, forKey: "relevanceScore")
        coder.encode(Int64(_summaryArgumentCount), forKey: "summaryArgumentCount")
        let info = NSMutableDictionary()
        for (key, value) in _userInfo {
            guard let key = key.base as? String, let text = UNUserNotificationCenter.text(of: value) else { continue }
            info[key as NSString] = text as NSString
        }
        coder.encode(info, forKey: "userInfo")
    }

    public required init?(coder: NSCoder) {
        func text(_ key: String) -> String { coder.decodeObject(of: NSString.self, forKey: key) as String? ?? "" }
        _title = text("title")
        _subtitle = text("subtitle")
        _body = text("body")
        _categoryIdentifier = text("categoryIdentifier")
        _threadIdentifier = text("threadIdentifier")
        _launchImageName = text("launchImageName")
        _summaryArgument = text("summaryArgument")
        _targetContentIdentifier = coder.decodeObject(of: NSString.self, forKey: "targetContentIdentifier") as String?
        _filterCriteria = coder.decodeObject(of: NSString.self, forKey: "filterCriteria") as String?
        _badge = coder.decodeObject(of: NSNumber.self, forKey: "badge")
        _sound = coder.decodeObject(of: UNNotificationSound.self, forKey: "sound")
        _attachments = coder.decodeObject(of: [NSArray.self, UNNotificationAttachment.self], forKey: "attachments")
            as? [UNNotificationAttachment] ?? []
        _interruptionLevel = UNNotificationInterruptionLevel(rawValue: UInt(clamping: coder.decodeInt64(forKey: "interruptionLevel"))) ?? .active
        _relevanceScore = coder.decodeDouble(forKey: "relevanceScore")
        _summaryArgumentCount = Int(coder.decodeInt64(forKey: "summaryArgumentCount"))
        if let info = coder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: "userInfo") as? NSDictionary {
            for (key, value) in info {
                if let key = key as? NSString, let value = value as? NSString { _userInfo[key as String] = value as String }
            }
        }
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
    open override var filterCriteria: String? { get { _filterCriteria } set { _filterCriteria = newValue } }
    @available(*, deprecated, message: "summaryArgument is ignored")
    open override var summaryArgument: String { get { _summaryArgument } set { _summaryArgument = newValue } }
    @available(*, deprecated, message: "summaryArgumentCount is ignored")
    open override var summaryArgumentCount: Int { get { _summaryArgumentCount } set { _summaryArgumentCount = newValue } }

    public override init() { super.init() }

    public required init?(coder: NSCoder) { super.init(coder: coder) }

    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = UNMutableNotificationContent()
        copyFields(to: copy)
        return copy
    }
}
