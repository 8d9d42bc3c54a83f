// A weekly reminder per weekday, then one cancelled: `swift run weekly-reminders [ID]`.
import Foundation
import UserNotifications

let id = CommandLine.arguments.dropFirst().first ?? "habit"
let center = UNUserNotificationCenter.current()
let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]  // as DateComponents.weekday

for (index, weekdayName) in weekdayNames.enumerated() {
    let content = UNMutableNotificationContent()
    content.title = "Habit check"
    content.body = "It is \(weekdayName): how did it go?"
    content.userInfo = ["weekday": weekdayName]
    var components = DateComponents()
    components.weekday = index + 1
    components.hour = 20
    let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
    center.add(UNNotificationRequest(identifier: "\(id)/\(weekdayName)", content: content, trigger: trigger),
               withCompletionHandler: nil)
}

// Mondays off.
center.removePendingNotificationRequests(withIdentifiers: ["\(id)/Monday"])

center.getPendingNotificationRequests { requests in
    for request in requests {
        let next = (request.trigger as? UNCalendarNotificationTrigger)?.nextTriggerDate()
        print(request.identifier, next.map { $0.formatted(date: .abbreviated, time: .shortened) } ?? "never")
    }
    exit(0)
}
dispatchMain()
