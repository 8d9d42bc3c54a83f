// An app that subclasses: its own content class, its own delegate class, and a text-input action
// made with UNNotificationAction's initializers, which UNTextInputNotificationAction inherits.
import Foundation
import UserNotifications

class ChatContent: UNMutableNotificationContent {
    convenience init(from sender: String, saying text: String) {
        self.init()
        title = sender
        body = text
        categoryIdentifier = "CHAT"
        threadIdentifier = "chat-\(sender.lowercased())"
    }
}

class ChatDelegate: NSObject, UNUserNotificationCenterDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                withCompletionHandler completionHandler: @escaping () -> Void) {
        print("pressed: \(response.actionIdentifier)")
        completionHandler()
    }
}

let reply = UNTextInputNotificationAction(identifier: "REPLY", title: "Reply", options: [])
let quick = UNTextInputNotificationAction(identifier: "QUICK", title: "Quick reply", options: [.authenticationRequired],
                                          icon: UNNotificationActionIcon(systemImageName: "text.bubble"))
print("actions: \(reply.identifier) \(quick.identifier), button titles empty: \(reply.textInputButtonTitle.isEmpty && quick.textInputPlaceholder.isEmpty)")
let delegate = ChatDelegate()
let center = UNUserNotificationCenter.current()
center.delegate = delegate
center.setNotificationCategories([UNNotificationCategory(identifier: "CHAT", actions: [reply, quick], intentIdentifiers: [],
                                                         options: [])])
let content = ChatContent(from: "Ana", saying: "Are you coming?")
let request = UNNotificationRequest(identifier: "chat-ana", content: content,
                                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false))
let added = DispatchSemaphore(value: 0)
center.add(request) { error in
    print(error == nil ? "added" : "failed: \(error!)")
    added.signal()
}
added.wait()
