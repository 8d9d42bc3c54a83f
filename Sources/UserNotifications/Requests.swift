// Requests, triggers, actions and categories, as Apple declares them (Tests/apple-api lists Apple's
// declarations; AppleDeclarationsTests holds this module to them), over chime's Trigger and
// NotificationRequest: the rules, the time arithmetic and the zones are Timekeeping's, the same the
// command line and the daemon use.
import ChimeCenter
import Foundation
import Timekeeping

/// When a request is delivered.
open class UNNotificationTrigger: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _repeats: Bool
    /// Whether the trigger fires again after it fires.
    open var repeats: Bool { _repeats }

    init(repeats: Bool) { _repeats = repeats }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) { coder.encode(_repeats, forKey: "repeats") }

    public required init?(coder: NSCoder) {
        _repeats = coder.decodeBool(forKey: "repeats")
    }

    /// Triggers are immutable: a copy is the trigger itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// After a number of seconds, once or repeating.
///
/// As on Apple, the interval must be greater than 0, and at least 60 seconds if the trigger repeats:
/// Apple raises `NSInternalInconsistencyException` there, which Swift cannot catch; here the program
/// stops with the same message, so code that runs on iOS runs the same here. Fractions of a second
/// are rounded up (chime's intervals are whole seconds).
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    let _timeInterval: TimeInterval
    /// When it was made: a trigger not yet added counts from here for `nextTriggerDate()`.
    let created = Date()

    /// The number of seconds after which it fires.
    open var timeInterval: TimeInterval { _timeInterval }

    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        if let problem = Self.problem(timeInterval: timeInterval, repeats: repeats) {
            fatalError("*** Terminating: NSInternalInconsistencyException: \(problem)")
        }
        self.init(unchecked: timeInterval, repeats: repeats)
    }

    init(unchecked timeInterval: TimeInterval, repeats: Bool) {
        _timeInterval = timeInterval
        super.init(repeats: repeats)
    }

    /// Apple's rule for intervals, in its words (nil: valid).
    package static func problem(timeInterval: TimeInterval, repeats: Bool) -> String? {
        guard timeInterval.isFinite, timeInterval > 0 else { return "time interval must be greater than 0" }
        if repeats, timeInterval < 60 { return "time interval must be at least 60 if repeating" }
        return nil
    }

    /// When it would fire, counted from now.
    open func nextTriggerDate() -> Date? { Date().addingTimeInterval(timeInterval) }

    var span: TimeSpan { .seconds(Int64(min(timeInterval.rounded(.up), 3650 * 86_400))) }

    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(_timeInterval, forKey: "timeInterval")
    }

    public required init?(coder: NSCoder) {
        let interval = coder.decodeDouble(forKey: "timeInterval")
        let repeats = coder.decodeBool(forKey: "repeats")
        guard Self.problem(timeInterval: interval, repeats: repeats) == nil else { return nil }
        _timeInterval = interval
        super.init(repeats: repeats)
    }
}

/// When the date components match: `hour = 9` alone is the next 09:00; with `repeats`, every day at
/// 09:00. `weekday` is Apple's: 1 is Sunday. The components' `timeZone`, when set, is the zone they
/// are read in; otherwise the system's, at every occurrence (a change of the system zone follows).
/// Supported: year, month, day, weekday, hour, minute, second (others make `add` fail with
/// `UNError.Code.notificationInvalidNoDate`).
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    let _dateComponents: Foundation.DateComponents
    /// The daemon's trigger, for a pending request read back.
    let stored: Trigger?

    /// The components the trigger matches.
    open var dateComponents: Foundation.DateComponents { _dateComponents }

    public convenience init(dateMatching dateComponents: Foundation.DateComponents, repeats: Bool) {
        self.init(dateMatching: dateComponents, repeats: repeats, stored: nil)
    }

    @available(swift, obsoleted: 3, renamed: "init(dateMatching:repeats:)")
    public convenience init(dateMatchingComponents: Foundation.DateComponents, repeats: Bool) {
        self.init(dateMatching: dateMatchingComponents, repeats: repeats, stored: nil)
    }

    init(dateMatching dateComponents: Foundation.DateComponents, repeats: Bool, stored: Trigger?) {
        _dateComponents = dateComponents
        self.stored = stored
        super.init(repeats: repeats)
    }

    /// The next date the components match after now (nil: none, or components chime cannot read).
    open func nextTriggerDate() -> Date? {
        let now = WallClock.system.now()
        guard let trigger = stored ?? (try? chimeTrigger(anchor: now)), let next = trigger.nextFire(after: now) else { return nil }
        return Date(next)
    }

    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(UNUserNotificationCenter.encode(_dateComponents), forKey: "dateComponents")
    }

    public required init?(coder: NSCoder) {
        guard let text = coder.decodeObject(of: NSString.self, forKey: "dateComponents") as String?,
            let components = UNUserNotificationCenter.decode(text)
        else { return nil }
        _dateComponents = components
        stored = nil
        super.init(repeats: coder.decodeBool(forKey: "repeats"))
    }

    /// chime's trigger for these components.
    func chimeTrigger(anchor: Instant) throws -> Trigger {
        let c = dateComponents
        let unsupported: [(String, Int?)] = [("nanosecond", c.nanosecond), ("weekdayOrdinal", c.weekdayOrdinal),
                                             ("weekOfMonth", c.weekOfMonth), ("weekOfYear", c.weekOfYear), ("quarter", c.quarter),
                                             ("era", c.era), ("yearForWeekOfYear", c.yearForWeekOfYear)]
        if let (name, _) = unsupported.first(where: { $0.1 != nil && $0.1 != NSDateComponentUndefined }) {
            throw UNError(.notificationInvalidNoDate, "date components: \(name) is not supported on Linux")
        }
        // Apple's weekday 1 is Sunday; chime's (ISO) 1 is Monday.
        let weekday = c.weekday.map { ($0 + 5) % 7 + 1 }
        if let apple = c.weekday, !(1...7).contains(apple) {
            throw UNError(.notificationInvalidNoDate, "date components: weekday \(apple) is out of range 1-7 (1 is Sunday)")
        }
        let components = Timekeeping.DateComponents(year: c.year, month: c.month, day: c.day, weekday: weekday, hour: c.hour,
                                                    minute: c.minute, second: c.second)
        do {
            return try Trigger.calendar(matching: components, repeats: repeats, timeZone: c.timeZone?.identifier, anchor: anchor)
        } catch {
            throw UNError(.notificationInvalidNoDate, "date components: \(error.message)")
        }
    }
}

/// A remote notification's trigger. No push service reaches the Linux desktop: no request carries
/// one here, and a program never makes one (as on Apple, where the system makes them).
open class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {}

/// A request: an identifier (adding one with the same identifier replaces it), content and a
/// trigger (nil: deliver now, within a second).
open class UNNotificationRequest: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _identifier: String
    let _content: UNNotificationContent
    let _trigger: UNNotificationTrigger?

    open var identifier: String { _identifier }
    open var content: UNNotificationContent { _content }
    open var trigger: UNNotificationTrigger? { _trigger }

    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.init(identifier: identifier, copying: content, trigger: trigger)
    }

    init(identifier: String, copying content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        _identifier = identifier
        _content = content.copy() as? UNNotificationContent ?? content
        _trigger = trigger
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_identifier as NSString, forKey: "identifier")
        coder.encode(_content, forKey: "content")
        coder.encode(_trigger, forKey: "trigger")
    }

    public required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: "identifier") as String?,
            let content = coder.decodeObject(of: UNNotificationContent.self, forKey: "content")
        else { return nil }
        _identifier = identifier
        _content = content
        _trigger = coder.decodeObject(of: [UNNotificationTrigger.self, UNTimeIntervalNotificationTrigger.self,
                                           UNCalendarNotificationTrigger.self, UNPushNotificationTrigger.self],
                                      forKey: "trigger") as? UNNotificationTrigger
    }

    /// Requests are immutable: a copy is the request itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A delivered notification.
open class UNNotification: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _date: Date
    let _request: UNNotificationRequest

    open var date: Date { _date }
    open var request: UNNotificationRequest { _request }

    init(date: Date, request: UNNotificationRequest) {
        _date = date
        _request = request
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_date.timeIntervalSince1970, forKey: "date")
        coder.encode(_request, forKey: "request")
    }

    public required init?(coder: NSCoder) {
        guard let request = coder.decodeObject(of: UNNotificationRequest.self, forKey: "request") else { return nil }
        _date = Date(timeIntervalSince1970: coder.decodeDouble(forKey: "date"))
        _request = request
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The action the user took: a button's identifier, or one of the two below.
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

/// What the user did with a notification, as the delegate's `didReceive` gets it.
open class UNNotificationResponse: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _notification: UNNotification
    let _actionIdentifier: String

    open var notification: UNNotification { _notification }
    open var actionIdentifier: String { _actionIdentifier }

    init(notification: UNNotification, actionIdentifier: String) {
        _notification = notification
        _actionIdentifier = actionIdentifier
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_notification, forKey: "notification")
        coder.encode(_actionIdentifier as NSString, forKey: "actionIdentifier")
    }

    public required init?(coder: NSCoder) {
        guard let notification = coder.decodeObject(of: UNNotification.self, forKey: "notification"),
            let action = coder.decodeObject(of: NSString.self, forKey: "actionIdentifier") as String?
        else { return nil }
        _notification = notification
        _actionIdentifier = action
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The response to a text-input action. No Linux notification server but Plasma takes text, and
/// chime does not ask for it: the delegate gets a plain `UNNotificationResponse` for such a button.
open class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    let _userText: String
    /// The text the user typed.
    open var userText: String { _userText }

    init(notification: UNNotification, actionIdentifier: String, userText: String) {
        _userText = userText
        super.init(notification: notification, actionIdentifier: actionIdentifier)
    }

    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(_userText as NSString, forKey: "userText")
    }

    public required init?(coder: NSCoder) {
        _userText = coder.decodeObject(of: NSString.self, forKey: "userText") as String? ?? ""
        super.init(coder: coder)
    }
}

public struct UNNotificationActionOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// An icon for an action's button. Linux notification servers show buttons as text: the icon is
/// kept with the action and not shown.
open class UNNotificationActionIcon: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let name: String
    let isSystemImage: Bool

    init(name: String, isSystemImage: Bool) {
        self.name = name
        self.isSystemImage = isSystemImage
    }

    /// An SF Symbols name on Apple's platforms.
    public convenience init(systemImageName: String) { self.init(name: systemImageName, isSystemImage: true) }
    /// An image of the app's bundle.
    public convenience init(templateImageName: String) { self.init(name: templateImageName, isSystemImage: false) }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(name as NSString, forKey: "name")
        coder.encode(isSystemImage, forKey: "system")
    }

    public required init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "name") as String? else { return nil }
        self.name = name
        isSystemImage = coder.decodeBool(forKey: "system")
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A button on a notification (where the server shows buttons: `actions` capability).
open class UNNotificationAction: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _identifier: String
    let _title: String
    let _options: UNNotificationActionOptions
    let _icon: UNNotificationActionIcon?

    open var identifier: String { _identifier }
    open var title: String { _title }
    open var options: UNNotificationActionOptions { _options }
    open var icon: UNNotificationActionIcon? { _icon }

    init(chimeIdentifier identifier: String, title: String, options: UNNotificationActionOptions, icon: UNNotificationActionIcon?) {
        _identifier = identifier
        _title = title
        _options = options
        _icon = icon
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(chimeIdentifier: identifier, title: title, options: options, icon: nil)
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?) {
        self.init(chimeIdentifier: identifier, title: title, options: options, icon: icon)
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_identifier as NSString, forKey: "identifier")
        coder.encode(_title as NSString, forKey: "title")
        coder.encode(Int64(bitPattern: UInt64(_options.rawValue)), forKey: "options")
        coder.encode(_icon, forKey: "icon")
    }

    public required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: "identifier") as String?,
            let title = coder.decodeObject(of: NSString.self, forKey: "title") as String?
        else { return nil }
        _identifier = identifier
        _title = title
        _options = UNNotificationActionOptions(rawValue: UInt(UInt64(bitPattern: coder.decodeInt64(forKey: "options"))))
        _icon = coder.decodeObject(of: UNNotificationActionIcon.self, forKey: "icon")
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A text-input action: shown as a plain button (no Linux server but Plasma takes text input, and
/// chime does not ask for it); the response carries no text.
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    let _textInputButtonTitle: String
    let _textInputPlaceholder: String

    open var textInputButtonTitle: String { _textInputButtonTitle }
    open var textInputPlaceholder: String { _textInputPlaceholder }

    init(identifier: String, title: String, options: UNNotificationActionOptions, icon: UNNotificationActionIcon?,
         buttonTitle: String, placeholder: String) {
        _textInputButtonTitle = buttonTitle
        _textInputPlaceholder = placeholder
        super.init(chimeIdentifier: identifier, title: title, options: options, icon: icon)
    }

    /// Overridden so that the subclass inherits `UNNotificationAction`'s convenience initializers, as
    /// Apple's does: `UNTextInputNotificationAction(identifier:title:options:)` is a text field with
    /// no button title or placeholder of its own (the server's defaults).
    override init(chimeIdentifier identifier: String, title: String, options: UNNotificationActionOptions, icon: UNNotificationActionIcon?) {
        _textInputButtonTitle = ""
        _textInputPlaceholder = ""
        super.init(chimeIdentifier: identifier, title: title, options: options, icon: icon)
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [], textInputButtonTitle: String,
                            textInputPlaceholder: String) {
        self.init(identifier: identifier, title: title, options: options, icon: nil, buttonTitle: textInputButtonTitle,
                  placeholder: textInputPlaceholder)
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?,
                            textInputButtonTitle: String, textInputPlaceholder: String) {
        self.init(identifier: identifier, title: title, options: options, icon: icon, buttonTitle: textInputButtonTitle,
                  placeholder: textInputPlaceholder)
    }

    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(_textInputButtonTitle as NSString, forKey: "textInputButtonTitle")
        coder.encode(_textInputPlaceholder as NSString, forKey: "textInputPlaceholder")
    }

    public required init?(coder: NSCoder) {
        _textInputButtonTitle = coder.decodeObject(of: NSString.self, forKey: "textInputButtonTitle") as String? ?? ""
        _textInputPlaceholder = coder.decodeObject(of: NSString.self, forKey: "textInputPlaceholder") as String? ?? ""
        super.init(coder: coder)
    }
}

public struct UNNotificationCategoryOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// The delegate hears of a popup the user closed (`UNNotificationDismissActionIdentifier`).
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    @available(*, deprecated, message: "Announcement option is ignored")
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// A set of actions a notification of this category shows.
open class UNNotificationCategory: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    let _identifier: String
    let _actions: [UNNotificationAction]
    let _intentIdentifiers: [String]
    let _options: UNNotificationCategoryOptions
    let _hiddenPreviewsBodyPlaceholder: String
    let _categorySummaryFormat: String

    open var identifier: String { _identifier }
    open var actions: [UNNotificationAction] { _actions }
    open var intentIdentifiers: [String] { _intentIdentifiers }
    open var options: UNNotificationCategoryOptions { _options }
    /// Kept; the Linux desktop has no hidden previews.
    open var hiddenPreviewsBodyPlaceholder: String { _hiddenPreviewsBodyPlaceholder }
    /// Kept; Linux notification servers do not summarize groups.
    open var categorySummaryFormat: String { _categorySummaryFormat }

    init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String], placeholder: String?, summaryFormat: String?,
         options: UNNotificationCategoryOptions) {
        _identifier = identifier
        _actions = actions
        _intentIdentifiers = intentIdentifiers
        _options = options
        _hiddenPreviewsBodyPlaceholder = placeholder ?? ""
        _categorySummaryFormat = summaryFormat ?? ""
    }

    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
                            options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers, placeholder: nil, summaryFormat: nil,
                  options: options)
    }

    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
                            hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
                  placeholder: hiddenPreviewsBodyPlaceholder, summaryFormat: nil, options: options)
    }

    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
                            hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?,
                            options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
                  placeholder: hiddenPreviewsBodyPlaceholder, summaryFormat: categorySummaryFormat, options: options)
    }

    open class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        coder.encode(_identifier as NSString, forKey: "identifier")
        coder.encode(_actions as NSArray, forKey: "actions")
        coder.encode(_intentIdentifiers.map { $0 as NSString } as NSArray, forKey: "intentIdentifiers")
        coder.encode(Int64(bitPattern: UInt64(_options.rawValue)), forKey: "options")
        coder.encode(_hiddenPreviewsBodyPlaceholder as NSString, forKey: "hiddenPreviewsBodyPlaceholder")
        coder.encode(_categorySummaryFormat as NSString, forKey: "categorySummaryFormat")
    }

    public required init?(coder: NSCoder) {
        guard let identifier = coder.decodeObject(of: NSString.self, forKey: "identifier") as String?,
            let actions = coder.decodeObject(of: [NSArray.self, UNNotificationAction.self, UNTextInputNotificationAction.self,
                                                  UNNotificationActionIcon.self], forKey: "actions") as? [UNNotificationAction]
        else { return nil }
        _identifier = identifier
        _actions = actions
        _intentIdentifiers = (coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "intentIdentifiers") as? [NSString])?
            .map { $0 as String } ?? []
        _options = UNNotificationCategoryOptions(rawValue: UInt(UInt64(bitPattern: coder.decodeInt64(forKey: "options"))))
        _hiddenPreviewsBodyPlaceholder = coder.decodeObject(of: NSString.self, forKey: "hiddenPreviewsBodyPlaceholder") as String? ?? ""
        _categorySummaryFormat = coder.decodeObject(of: NSString.self, forKey: "categorySummaryFormat") as String? ?? ""
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var hash: Int { identifier.hashValue }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationCategory)?.identifier == identifier }
}

/// A notification service extension: on Apple's platforms the system runs one to change a remote
/// notification's content before it is shown. The Linux desktop has no app extensions and no push
/// service, so nothing runs one; a subclass compiles, and the base class hands the content on
/// unchanged, as Apple's does.
open class UNNotificationServiceExtension: NSObject {
    public override init() {}

    open func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping @Sendable (UNNotificationContent) -> Void) {
        contentHandler(request.content)
    }

    open func serviceExtensionTimeWillExpire() {}
}

extension Date {
    init(_ instant: Instant) {
        self.init(timeIntervalSince1970: TimeInterval(instant.seconds) + TimeInterval(instant.nanosecond) / 1e9)
    }
}
