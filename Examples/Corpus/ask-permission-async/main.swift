// The same with async/await, and the provisional option some apps ask for.
import Foundation
import UserNotifications

func requestNotifications() async -> Bool {
    let center = UNUserNotificationCenter.current()
    do {
        return try await center.requestAuthorization(options: [.alert, .sound, .badge, .provisional])
    } catch {
        print("Request authorization failed: \(error.localizedDescription)")
        return false
    }
}

let granted = await requestNotifications()
print("granted=\(granted)")
let settings = await UNUserNotificationCenter.current().notificationSettings()
print("alerts=\(settings.alertSetting == .enabled) badges=\(settings.badgeSetting == .notSupported ? "unsupported" : "supported")")
