// An app that subclasses, as Apple's templates do: a notification service extension that changes
// the content before it is shown (here the app hands it its own request, as nothing on Linux runs
// extensions), its own delegate class, and a text-input action made with UNNotificationAction's
// initializers, which UNTextInputNotificationAction inherits.
import Foundation
import UserNotifications

class NotificationService: UNNotificationServiceExtension {
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?

    override func didReceive(_ request: UNNotificationRequest,
                             withContentHandler contentHandler: @escaping @Sendable (UNNotificationContent) -> Void) {
        self.contentHandler = contentHandler
        bestAttemptContent = request.content.mutableCopy() as? UNMutableNotificationContent
        if let bestAttemptContent = bestAttemptContent {
            bestAttemptContent.title = "\(bestAttemptContent.title) (2 new)"
            contentHandler(bestAttemptContent)
        }
    }

    override func serviceExtensionTimeWillExpire() {
        if let contentHandler = contentHandler, let bestAttemptContent = bestAttemptContent {
            contentHandler(bestAttemptContent)
        }
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
let content = UNMutableNotificationContent()
content.title = "Ana"
content.body = "Are you coming?"
content.categoryIdentifier = "CHAT"
let incoming = UNNotificationRequest(identifier: "chat-ana", content: content,
                                     trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false))
let added = DispatchSemaphore(value: 0)
NotificationService().didReceive(incoming) { changed in
    print("title: \(changed.title)")
    center.add(UNNotificationRequest(identifier: incoming.identifier, content: changed, trigger: incoming.trigger)) { error in
        print(error == nil ? "added" : "failed: \(error!)")
        added.signal()
    }
}
added.wait()
