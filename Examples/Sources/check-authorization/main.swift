// Check the settings before scheduling, as an app does at launch: `swift run check-authorization`.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()

func schedule() {
    let content = UNMutableNotificationContent()
    content.title = "Stretch"
    content.body = "Time to stand up"
    content.sound = .default
    let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 60 * 60, repeats: true)
    center.add(UNNotificationRequest(identifier: "stretch", content: content, trigger: trigger)) { error in
        print(error.map { "not scheduled: \($0)" } ?? "scheduled: every hour")
        exit(error == nil ? 0 : 1)
    }
}

center.getNotificationSettings { settings in
    print("authorization: \(settings.authorizationStatus == .authorized ? "authorized" : "not authorized"), "
        + "sound: \(settings.soundSetting == .enabled ? "yes" : "no"), badges: \(settings.badgeSetting == .notSupported ? "not supported" : "yes")")
    if settings.authorizationStatus == .authorized {
        schedule()
    } else {
        center.requestAuthorization(options: [.alert, .sound]) { granted, error in
            if granted {
                schedule()
            } else {
                print("notifications are not allowed: \(error.map { "\($0)" } ?? "denied")")
                exit(1)
            }
        }
    }
}
dispatchMain()
