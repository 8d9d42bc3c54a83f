// Badges, as iOS 16 apps set them (the Linux desktop has none: accepted, nothing shown).
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let content = UNMutableNotificationContent()
content.title = "3 unread"
content.badge = NSNumber(value: 3)
try await center.add(UNNotificationRequest(identifier: "unread", content: content,
                                           trigger: UNTimeIntervalNotificationTrigger(timeInterval: 7200, repeats: false)))
try await center.setBadgeCount(3)
center.setBadgeCount(0)
center.setBadgeCount(0) { error in
    print(error == nil ? "badge cleared" : "badge error: \(error!)")
    exit(0)
}
dispatchMain()
