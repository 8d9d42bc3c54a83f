// A file that imports UserNotifications and nothing else, as much code written for Apple's does:
// Date, UUID, Calendar, DateComponents, TimeInterval and DispatchQueue come with it.
import UserNotifications

let center = UNUserNotificationCenter.current()
let done = DispatchSemaphore(value: 0)

// Tomorrow at 08:15, by the calendar.
var morning = Calendar.current.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(24 * 60 * 60))
morning.hour = 8
morning.minute = 15
let content = UNMutableNotificationContent()
content.title = "Water the plants"
content.body = "The ferns first"
let trigger = UNCalendarNotificationTrigger(dateMatching: morning, repeats: false)
let id = UUID().uuidString
center.add(UNNotificationRequest(identifier: "plants", content: content, trigger: trigger)) { error in
    if let error = error {
        print("failed: \(error)")
    } else {
        let interval: TimeInterval = trigger.nextTriggerDate()?.timeIntervalSinceNow ?? 0
        print("scheduled in under a day and a half: \(interval > 0 && interval < 36 * 60 * 60)")
    }
    DispatchQueue.main.async {
        print("id is a UUID: \(UUID(uuidString: id) != nil)")
        done.signal()
    }
}
while done.wait(timeout: .now()) == .timedOut {
    RunLoop.main.run(until: Date().addingTimeInterval(0.05))
}
