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
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

/// What notifications can do here, as `getNotificationSettings` gives it: read from the live server.
open class UNNotificationSettings: NSObject, @unchecked Sendable {
    public let authorizationStatus: UNAuthorizationStatus
    public let soundSetting: UNNotificationSetting
    /// `.notSupported`: app badges do not exist on the Linux desktop.
    public let badgeSetting: UNNotificationSetting
    public let alertSetting: UNNotificationSetting
    /// Whether the server keeps notifications in a list (its `persistence` capability).
    public let notificationCenterSetting: UNNotificationSetting
    public let lockScreenSetting: UNNotificationSetting
    public let carPlaySetting: UNNotificationSetting
    public let alertStyle: UNAlertStyle
    public let showPreviewsSetting: UNShowPreviewsSetting
    public let criticalAlertSetting: UNNotificationSetting
    public let providesAppNotificationSettings: Bool
    public let announcementSetting: UNNotificationSetting
    public let timeSensitiveSetting: UNNotificationSetting
    public let scheduledDeliverySetting: UNNotificationSetting
    public let directMessagesSetting: UNNotificationSetting
    /// chime's own reading, with everything the server said (capabilities, name, sound player, do-not-disturb).
    public let chime: NotificationSettings

    init(_ settings: NotificationSettings) {
        chime = settings
        let authorized = settings.isAuthorized
        func setting(_ s: Setting) -> UNNotificationSetting { s == .enabled ? .enabled : .notSupported }
        authorizationStatus = authorized ? .authorized : .denied
        alertSetting = authorized ? .enabled : .disabled
        switch settings.sound {
        case .notSupported: soundSetting = authorized ? .notSupported : .disabled
        default: soundSetting = .enabled
        }
        badgeSetting = .notSupported
        notificationCenterSetting = setting(settings.persistence)
        lockScreenSetting = .notSupported
        carPlaySetting = .notSupported
        alertStyle = authorized ? (settings.persistence == .enabled ? .alert : .banner) : .none
        showPreviewsSetting = .always
        // Critical urgency is part of the notification spec; every server takes it.
        criticalAlertSetting = authorized ? .enabled : .disabled
        providesAppNotificationSettings = false
        announcementSetting = .notSupported
        timeSensitiveSetting = authorized ? .enabled : .disabled
        scheduledDeliverySetting = .notSupported
        directMessagesSetting = .notSupported
    }
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

    public static var errorDomain: String { UNErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
    public var description: String { reason.isEmpty ? "UNError \(code.rawValue)" : reason }

    public static var notificationsNotAllowed: Code { .notificationsNotAllowed }
    public static var notificationInvalidNoDate: Code { .notificationInvalidNoDate }
}

public let UNErrorDomain = "UNErrorDomain"
