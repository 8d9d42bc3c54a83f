// A text-input action, and a response read as UNTextInputNotificationResponse where it is one.
import Foundation
import UserNotifications

class ReplyHandler: NSObject, UNUserNotificationCenterDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
        if let textResponse = response as? UNTextInputNotificationResponse {
            print("replied: \(textResponse.userText)")
        } else {
            print("pressed: \(response.actionIdentifier)")
        }
        completionHandler()
        exit(0)
    }
}

let handler = ReplyHandler()
let center = UNUserNotificationCenter.current()
center.delegate = handler
let reply = UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [],
                                          textInputButtonTitle: "Send", textInputPlaceholder: "Type a message")
center.setNotificationCategories([UNNotificationCategory(identifier: "MESSAGE", actions: [reply], intentIdentifiers: [],
                                                         options: [])])
let content = UNMutableNotificationContent()
content.title = "Sam"
content.body = "Lunch today?"
content.categoryIdentifier = "MESSAGE"
center.add(UNNotificationRequest(identifier: "message-1", content: content, trigger: nil))
dispatchMain()
