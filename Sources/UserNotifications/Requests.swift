// Requests, triggers, actions and categories, as Apple has them, over chime's Trigger and
// NotificationRequest: the rules, the time arithmetic and the zones are Timekeeping's, the same
// the command line and the daemon use.
import ChimeCenter
import Foundation
import Timekeeping

/// When a request is delivered.
open class UNNotificationTrigger: NSObject, @unchecked Sendable {
    public let repeats: Bool
    init(repeats: Bool) { self.repeats = repeats }
}

/// After a number of seconds, once or repeating.
///
/// As on Apple, the interval must be greater than 0, and at least 60 seconds if the trigger repeats:
/// Apple raises `NSInternalInconsistencyException` there, which Swift cannot catch; here the program
/// stops with the same message, so code that runs on iOS runs the same here. Fractions of a second
/// are rounded up (chime's intervals are whole seconds).
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let timeInterval: TimeInterval
    /// When it was made: a trigger not yet added counts from here for `nextTriggerDate()`.
    let created = Date()

    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        if let problem = Self.problem(timeInterval: timeInterval, repeats: repeats) {
            fatalError("*** Terminating: NSInternalInconsistencyException: \(problem)")
        }
        self.init(unchecked: timeInterval, repeats: repeats)
    }

    init(unchecked timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        super.init(repeats: repeats)
    }

    /// Apple's rule for intervals, in its words (nil: valid).
    public static func problem(timeInterval: TimeInterval, repeats: Bool) -> String? {
        guard timeInterval.isFinite, timeInterval > 0 else { return "time interval must be greater than 0" }
        if repeats, timeInterval < 60 { return "time interval must be at least 60 if repeating" }
        return nil
    }

    /// When it would fire, counted from now.
    open func nextTriggerDate() -> Date? { Date().addingTimeInterval(timeInterval) }

    var span: TimeSpan { .seconds(Int64(min(timeInterval.rounded(.up), 3650 * 86_400))) }
}

/// When the date components match: `hour = 9` alone is the next 09:00; with `repeats`, every day at
/// 09:00. `weekday` is Apple's: 1 is Sunday. The components' `timeZone`, when set, is the zone they
/// are read in; otherwise the system's, at every occurrence (a change of the system zone follows).
/// Supported: year, month, day, weekday, hour, minute, second (others make `add` fail with
/// `UNError.Code.notificationInvalidNoDate`).
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let dateComponents: Foundation.DateComponents
    /// The daemon's trigger, for a pending request read back.
    let stored: Trigger?

    public convenience init(dateMatching dateComponents: Foundation.DateComponents, repeats: Bool) {
        self.init(dateMatching: dateComponents, repeats: repeats, stored: nil)
    }

    init(dateMatching dateComponents: Foundation.DateComponents, repeats: Bool, stored: Trigger?) {
        self.dateComponents = dateComponents
        self.stored = stored
        super.init(repeats: repeats)
    }

    /// The next date the components match after now (nil: none, or components chime cannot read).
    open func nextTriggerDate() -> Date? {
        let now = WallClock.system.now()
        guard let trigger = stored ?? (try? chimeTrigger(anchor: now)), let next = trigger.nextFire(after: now) else { return nil }
        return Date(next)
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

/// A request: an identifier (adding one with the same identifier replaces it), content and a
/// trigger (nil: deliver now, within a second).
open class UNNotificationRequest: NSObject, @unchecked Sendable {
    public let identifier: String
    public let content: UNNotificationContent
    public let trigger: UNNotificationTrigger?

    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = content.copy() as? UNNotificationContent ?? content
        self.trigger = trigger
    }
}

/// A delivered notification.
open class UNNotification: NSObject, @unchecked Sendable {
    public let date: Date
    public let request: UNNotificationRequest
    init(date: Date, request: UNNotificationRequest) {
        self.date = date
        self.request = request
    }
}

/// The action the user took: a button's identifier, or one of the two below.
public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

/// What the user did with a notification, as the delegate's `didReceive` gets it.
open class UNNotificationResponse: NSObject, @unchecked Sendable {
    public let notification: UNNotification
    public let actionIdentifier: String
    init(notification: UNNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
    }
}

public struct UNNotificationActionOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// A button on a notification (where the server shows buttons: `actions` capability).
open class UNNotificationAction: NSObject, @unchecked Sendable {
    public let identifier: String
    public let title: String
    public let options: UNNotificationActionOptions
    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.identifier = identifier
        self.title = title
        self.options = options
    }
}

/// A text-input action: shown as a plain button (no Linux server but Plasma takes text input, and
/// chime does not ask for it); the response carries no text.
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    public let textInputButtonTitle: String
    public let textInputPlaceholder: String
    public init(identifier: String, title: String, options: UNNotificationActionOptions = [], textInputButtonTitle: String,
                textInputPlaceholder: String) {
        self.textInputButtonTitle = textInputButtonTitle
        self.textInputPlaceholder = textInputPlaceholder
        super.init(identifier: identifier, title: title, options: options)
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
}

/// A set of actions a notification of this category shows.
open class UNNotificationCategory: NSObject, @unchecked Sendable {
    public let identifier: String
    public let actions: [UNNotificationAction]
    public let intentIdentifiers: [String]
    public let options: UNNotificationCategoryOptions

    public init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
                options: UNNotificationCategoryOptions = []) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
    }

    public convenience init(identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
                            hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []) {
        self.init(identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers, options: options)
    }

    open override var hash: Int { identifier.hashValue }
    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationCategory)?.identifier == identifier }
}

extension Date {
    init(_ instant: Instant) {
        self.init(timeIntervalSince1970: TimeInterval(instant.seconds) + TimeInterval(instant.nanosecond) / 1e9)
    }
}
