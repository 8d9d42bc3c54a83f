// userInfo carried with a request and read back from the pending list.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let content = UNMutableNotificationContent()
content.title = "Order shipped"
content.body = "Your order is on its way"
content.userInfo = ["orderID": "A-1043", "items": 3, "express": true]
center.add(UNNotificationRequest(identifier: "order-A-1043", content: content,
                                 trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3 * 86_400, repeats: false))) { _ in
    center.getPendingNotificationRequests { requests in
        let info = requests.first { $0.identifier == "order-A-1043" }?.content.userInfo ?? [:]
        let orderID = info["orderID"] as? String ?? "?"
        print("order \(orderID), items \(info["items"].map { "\($0)" } ?? "?")")
        exit(0)
    }
}
dispatchMain()
