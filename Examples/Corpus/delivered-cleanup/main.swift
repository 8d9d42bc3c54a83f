// Shows two notifications, reads what was delivered, and clears them.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
for name in ["Alice", "Bob"] {
    let content = UNMutableNotificationContent()
    content.title = "New message"
    content.body = "From \(name)"
    content.threadIdentifier = "chat"
    center.add(UNNotificationRequest(identifier: "msg-\(name)", content: content, trigger: nil))
}

func waitForDelivered(_ attempts: Int) {
    center.getDeliveredNotifications { notifications in
        if notifications.count < 2 && attempts > 0 {
            Thread.sleep(forTimeInterval: 0.2)
            waitForDelivered(attempts - 1)
            return
        }
        print("delivered: \(notifications.map { $0.request.identifier }.sorted().joined(separator: " "))")
        center.removeDeliveredNotifications(withIdentifiers: ["msg-Alice"])
        center.removeAllDeliveredNotifications()
        center.getDeliveredNotifications { left in
            print("left: \(left.count)")
            exit(0)
        }
    }
}
waitForDelivered(100)
dispatchMain()
