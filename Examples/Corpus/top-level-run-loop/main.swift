// Scheduling, then keeping the run loop alive a moment, as AppKit-less tools sometimes do.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let content = UNMutableNotificationContent()
content.title = "Stand up"
content.body = "You have been sitting for an hour."
let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: true)
center.add(UNNotificationRequest(identifier: "stand-up", content: content, trigger: trigger)) { error in
    print(error == nil ? "added" : "error: \(error!)")
}
RunLoop.main.run(until: Date(timeIntervalSinceNow: 1))
