// The delegate as UIKit apps write it: an NSObject subclass, completion handlers, a switch over
// the action's identifier.
import Foundation
import UserNotifications

class AppDelegate: NSObject, UNUserNotificationCenterDelegate {
    var onResponse: ((String) -> Void)?

    func applicationDidFinishLaunching() {
        UNUserNotificationCenter.current().delegate = self
        let snooze = UNNotificationAction(identifier: "SNOOZE", title: "Snooze", options: [])
        let done = UNNotificationAction(identifier: "DONE", title: "Done", options: [.destructive])
        let category = UNNotificationCategory(identifier: "ALARM", actions: [snooze, done], intentIdentifiers: [], options: [])
        UNUserNotificationCenter.current().setNotificationCategories([category])
    }

    // Show the notification even while the app is in front.
    func userNotificationCenter(_ center: UNUserNotificationCenter,
                                willPresent notification: UNNotification,
                                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        print("will present \(notification.request.identifier)")
        completionHandler([.banner, .list, .sound])
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter,
                                didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
        switch response.actionIdentifier {
        case "SNOOZE":
            onResponse?("snoozed \(response.notification.request.identifier)")
        case "DONE":
            onResponse?("done \(response.notification.request.identifier)")
        case UNNotificationDefaultActionIdentifier:
            onResponse?("opened")
        case UNNotificationDismissActionIdentifier:
            onResponse?("dismissed")
        default:
            break
        }
        completionHandler()
    }
}
