// Catching UNError by its code, as an app's async scheduling function does.
import Foundation
import UserNotifications

func schedule(_ title: String, matching components: DateComponents, identifier: String) async {
    let content = UNMutableNotificationContent()
    content.title = title
    let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
    do {
        try await UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: identifier, content: content, trigger: trigger))
        print("\(identifier): scheduled")
    } catch let error as UNError where error.code == .notificationInvalidNoContent {
        print("\(identifier): no content (\(error.code.rawValue))")
    } catch {
        let nsError = error as NSError
        print("\(identifier): \(nsError.domain) \(nsError.code)")
    }
}

var nextYear = DateComponents()
nextYear.year = Calendar.current.component(.year, from: Date()) + 1
nextYear.month = 1
nextYear.day = 1
nextYear.hour = 0
await schedule("Happy new year", matching: nextYear, identifier: "new-year")
await schedule("", matching: nextYear, identifier: "untitled")
var past = DateComponents()
past.year = 2001
past.month = 1
past.day = 1
await schedule("A date long gone", matching: past, identifier: "past")
