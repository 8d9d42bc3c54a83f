// Notifications grouped by thread, with their interruption levels and relevance.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let messages: [(thread: String, text: String, level: UNNotificationInterruptionLevel)] = [
    ("family", "Dinner at 7", .active),
    ("family", "Bring bread", .passive),
    ("work", "Server is down", .timeSensitive),
]
for (index, message) in messages.enumerated() {
    let content = UNMutableNotificationContent()
    content.title = message.thread.capitalized
    content.body = message.text
    content.threadIdentifier = message.thread
    content.interruptionLevel = message.level
    content.relevanceScore = message.level == .timeSensitive ? 1.0 : 0.2
    center.add(UNNotificationRequest(identifier: "message-\(index)", content: content, trigger: nil))
}
print("sent \(messages.count)")
