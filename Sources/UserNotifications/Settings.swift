// Authorization and settings, read from the notification server that runs now: its capabilities
// are the authorization (there is no permission prompt on the Linux desktop).
import ChimeCenter
import Foundation

/// What a program asks to be allowed. On Linux nothing is asked of the user: a running
/// notification server is the permission, and each option is granted as far as it can do it.
public struct UNAuthorizationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
    @available(*, deprecated, message: "Announcement authorization is always included")
    public static let announcement = UNAuthorizationOptions(rawValue: 1 << 7)
    @available(*, deprecated, message: "Use time-sensitive entitlement")
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 1 << 8)
}

public enum UNAuthorizationStatus: Int, Sendable {
    case notDetermined = 0
    /// No notification server runs (or none answers).
    case denied = 1
    /// A notification server runs.
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

public enum UNNotificationSetting: Int, Sendable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

public enum UNAlertStyle: Int, Sendable {
    case none = 0
    case banner = 1
    case alert = 2
}

public enum UNShowPreviewsSetting: Int, Sendable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}

/// How to present a notification while the program runs (the delegate's `willPresent` answer).
public struct UNNotificationPresentationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    @available(*, deprecated, message: "Use list and banner")
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// What notifications can do here, as `getNotificationSettings` gives it: read from the live server.
open class UNNotificationSettings: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    /// chime's own reading, with everything the server said (capabilities, name, sound player,
    /// do-not-disturb; not in Apple's API).
    public let chime: NotificationSettings

    open var authorizationStatus: UNAuthorizationStatus { chime.isAuthorized ? .authorized : .denied }
    open var soundSetting: UNNotificationSetting {
        switch chime.sound {
        case .notSupported: chime.isAuthorized ? .notSupported : .disabled
        default: .enabled
        }
    }
    /// `.notSupported`: app badges do not exist on the Linux desktop.
    open var badgeSetting: UNNotificationSetting { .notSupported }
    open var alertSetting: UNNotificationSetting { chime.isAuthorized ? .enabled : .disabled }
    /// Whether the server keeps notifications in a list (its `persistence` capability).
    open var notificationCenterSetting: UNNotificationSetting { chime.persistence == .enabled ? .enabled : .notSupported }
    open var lockScreenSetting: UNNotificationSetting { .notSupported }
    open var carPlaySetting: UNNotificationSetting { .notSupported }
    open var alertStyle: UNAlertStyle { chime.isAuthorized ? (chime.persistence == .enabled ? .alert : .banner) : .none }
    open var showPreviewsSetting: UNShowPreviewsSetting { .always }
    /// Critical urgency is part of the notification spec; every server takes it.
    open var criticalAlertSetting: UNNotificationSetting { chime.isAuthorized ? .enabled : .disabled }
    open var providesAppNotificationSettings: Bool { false }
    open var announcementSetting: UNNotificationSetting { .notSupported }
    open var timeSensitiveSetting: UNNotificationSetting { chime.isAuthorized ? .enabled : .disabled }
    open var scheduledDeliverySetting: UNNotificationSetting { .notSupported }
    open var directMessagesSetting: UNNotificationSetting { .notSupported }

    init(_ settings: NotificationSettings) {
        chime = settings
    }

    open class var supportsSecureCoding: Bool { true }

    /// chime's reading, as JSON.
    open func encode(with coder: NSCoder) {
        if let data = try? JSONEncoder().encode(chime) { coder.encode(data as NSData, forKey: "chime") }
    }

    public required init?(coder: NSCoder) {
        guard let data = coder.decodeObject(of: NSData.self, forKey: "chime") as Data?,
            let settings = try? JSONDecoder().decode(NotificationSettings.self, from: data)
        else { return nil }
        chime = settings
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The errors of this module, with Apple's codes.
public struct UNError: Error, CustomNSError, CustomStringConvertible, Hashable, Sendable {
    public enum Code: Int, Sendable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
        case badgeInputInvalid = 1600
    }

    public let code: Code
    /// What went wrong, in a sentence.
    public let reason: String

    public init(_ code: Code, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// As Apple's error types are made: the code, and the reason under `NSLocalizedDescriptionKey`.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.init(code, userInfo[NSLocalizedDescriptionKey] as? String ?? "")
    }

    public static var errorDomain: String { UNErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
    public var description: String { reason.isEmpty ? "UNError \(code.rawValue)" : reason }

    public static var notificationsNotAllowed: UNError.Code { .notificationsNotAllowed }
    public static var attachmentInvalidURL: UNError.Code { .attachmentInvalidURL }
    public static var attachmentUnrecognizedType: UNError.Code { .attachmentUnrecognizedType }
    public static var attachmentInvalidFileSize: UNError.Code { .attachmentInvalidFileSize }
    public static var attachmentNotInDataStore: UNError.Code { .attachmentNotInDataStore }
    public static var attachmentMoveIntoDataStoreFailed: UNError.Code { .attachmentMoveIntoDataStoreFailed }
    public static var attachmentCorrupt: UNError.Code { .attachmentCorrupt }
    public static var notificationInvalidNoDate: UNError.Code { .notificationInvalidNoDate }
    public static var notificationInvalidNoContent: UNError.Code { .notificationInvalidNoContent }
    public static var contentProvidingObjectNotAllowed: UNError.Code { .contentProvidingObjectNotAllowed }
    public static var contentProvidingInvalid: UNError.Code { .contentProvidingInvalid }
    public static var badgeInputInvalid: UNError.Code { .badgeInputInvalid }
}

public let UNErrorDomain = "UNErrorDomain"
