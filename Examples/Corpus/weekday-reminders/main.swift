// One request per chosen weekday, as habit trackers do.
import Foundation
import UserNotifications

enum Weekday: Int, CaseIterable {
    case sunday = 1, monday, tuesday, wednesday, thursday, friday, saturday
}

func scheduleWorkout(on days: [Weekday], hour: Int, minute: Int) {
    let center = UNUserNotificationCenter.current()
    for day in days {
        let content = UNMutableNotificationContent()
        content.title = "Workout time 💪"
        content.body = "Don't skip leg day"
        content.categoryIdentifier = "WORKOUT"
        var components = DateComponents()
        components.weekday = day.rawValue
        components.hour = hour
        components.minute = minute
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        let request = UNNotificationRequest(identifier: "workout-\(day.rawValue)", content: content, trigger: trigger)
        center.add(request, withCompletionHandler: nil)
    }
}

scheduleWorkout(on: [.monday, .wednesday, .friday], hour: 7, minute: 15)
UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
    print("pending: \(requests.count)")
    exit(0)
}
dispatchMain()
