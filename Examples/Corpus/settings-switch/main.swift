// Checking the settings before scheduling, with a switch over every status.
import Foundation
import UserNotifications

func describe(_ status: UNAuthorizationStatus) -> String {
    switch status {
    case .notDetermined: return "not determined"
    case .denied: return "denied"
    case .authorized: return "authorized"
    case .provisional: return "provisional"
    case .ephemeral: return "ephemeral"
    @unknown default: return "unknown"
    }
}

UNUserNotificationCenter.current().getNotificationSettings { settings in
    print("status: \(describe(settings.authorizationStatus))")
    guard settings.authorizationStatus == .authorized || settings.authorizationStatus == .provisional else {
        exit(1)
    }
    if settings.alertSetting == .enabled {
        print("alerts on, style \(settings.alertStyle == .alert ? "alert" : settings.alertStyle == .banner ? "banner" : "none")")
    }
    if settings.soundSetting == .enabled { print("sounds on") }
    exit(0)
}
dispatchMain()
