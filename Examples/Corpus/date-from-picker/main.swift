// A date the user picked, turned into components: the most common one-off reminder.
import Foundation
import UserNotifications

func scheduleReminder(title: String, at date: Date) {
    let content = UNMutableNotificationContent()
    content.title = title
    content.sound = UNNotificationSound.default
    let components = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute], from: date)
    let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
    let request = UNNotificationRequest(identifier: "dentist", content: content, trigger: trigger)
    UNUserNotificationCenter.current().add(request) { error in
        if let error = error {
            print("Unable to add notification request (\(error), \(error.localizedDescription))")
        }
    }
}

let tomorrow = Calendar.current.date(byAdding: .day, value: 1, to: Date())!
let picked = Calendar.current.date(bySettingHour: 10, minute: 30, second: 0, of: tomorrow)!
scheduleReminder(title: "Dentist appointment", at: picked)

UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
    for request in requests {
        if let trigger = request.trigger as? UNCalendarNotificationTrigger, let next = trigger.nextTriggerDate() {
            print("\(request.identifier) in \(Calendar.current.dateComponents([.day], from: Calendar.current.startOfDay(for: Date()), to: next).day!) day(s) at \(Calendar.current.component(.hour, from: next)):\(Calendar.current.component(.minute, from: next))")
        }
    }
    exit(0)
}
dispatchMain()
