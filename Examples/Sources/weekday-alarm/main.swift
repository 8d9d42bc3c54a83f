// 16:35 every weekday: `swift run weekday-alarm`. One repeating calendar trigger per weekday,
// numbered as on Apple (1 is Sunday, so 2...6 are Monday to Friday).
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let content = UNMutableNotificationContent()
content.title = "Homeroom"
content.body = "Check the guidance list"
content.sound = UNNotificationSound(named: UNNotificationSoundName(rawValue: "bell.oga"))
content.interruptionLevel = .timeSensitive

for weekday in 2...6 {
    var components = DateComponents()
    components.weekday = weekday
    components.hour = 16
    components.minute = 35
    let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
    let request = UNNotificationRequest(identifier: "homeroom/\(weekday)", content: content, trigger: trigger)
    center.add(request) { error in
        if let error { print("could not add homeroom/\(weekday): \(error)") }
    }
}

// Wait for the adds (their handlers run on the center's queue, in order), then list what is pending.
for request in await center.pendingNotificationRequests().sorted(by: { $0.identifier < $1.identifier }) {
    let next = (request.trigger as? UNCalendarNotificationTrigger)?.nextTriggerDate()
    print(request.identifier, next.map { $0.formatted(date: .complete, time: .shortened) } ?? "never")
}
