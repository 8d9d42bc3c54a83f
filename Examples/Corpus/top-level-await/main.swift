// A script's top level, as most tutorials write it: `try await center.add(request)`, then the
// program ends. (Swift picks the synchronous `add` in top-level code; either way the request is
// with the daemon when the line returns.)
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let content = UNMutableNotificationContent()
content.title = "Drink water"
content.body = "Stay hydrated!"
content.sound = .default

let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 2 * 60 * 60, repeats: true)
let request = UNNotificationRequest(identifier: "hydrate", content: content, trigger: trigger)
try await center.add(request)
print("scheduled")
