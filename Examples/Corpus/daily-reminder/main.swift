// Apple's documentation's way: the date components of a time of day, repeating.
import Foundation
import UserNotifications

let content = UNMutableNotificationContent()
content.title = "Weekly Staff Meeting"
content.body = "Every Tuesday at 2pm"

// Configure the recurring date.
var dateComponents = DateComponents()
dateComponents.calendar = Calendar.current
dateComponents.weekday = 3  // Tuesday
dateComponents.hour = 14    // 14:00 hours

// Create the trigger as a repeating event.
let trigger = UNCalendarNotificationTrigger(dateMatching: dateComponents, repeats: true)

// Create the request
let uuidString = UUID().uuidString
let request = UNNotificationRequest(identifier: uuidString, content: content, trigger: trigger)

// Schedule the request with the system.
let notificationCenter = UNUserNotificationCenter.current()
notificationCenter.add(request) { error in
    if error != nil {
        print("could not schedule: \(error!)")
        exit(1)
    }
    print("next: \(trigger.nextTriggerDate().map { Calendar.current.component(.weekday, from: $0) } ?? 0)")
    exit(0)
}
dispatchMain()
