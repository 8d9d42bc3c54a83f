// The delegate's async methods (iOS 15 and later), on a main-actor class in Swift 6.
import Foundation
import UserNotifications

@MainActor
final class Coordinator: NSObject, UNUserNotificationCenterDelegate {
    var presented: [String] = []
    let answered: (String) -> Void

    init(answered: @escaping (String) -> Void) {
        self.answered = answered
    }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter,
                                            willPresent notification: UNNotification) async -> UNNotificationPresentationOptions {
        let identifier = notification.request.identifier
        await MainActor.run { presented.append(identifier) }
        return [.banner, .sound]
    }

    nonisolated func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let action = response.actionIdentifier
        await MainActor.run { answered(action) }
    }
}

let coordinator = Coordinator { action in
    print("action: \(action == UNNotificationDefaultActionIdentifier ? "default" : action)")
    exit(0)
}
let center = UNUserNotificationCenter.current()
center.delegate = coordinator
center.setNotificationCategories([UNNotificationCategory(identifier: "REVIEW",
                                                         actions: [UNNotificationAction(identifier: "APPROVE", title: "Approve")],
                                                         intentIdentifiers: [])])
let content = UNMutableNotificationContent()
content.title = "Pull request"
content.body = "Fix the flaky test"
content.categoryIdentifier = "REVIEW"
try await center.add(UNNotificationRequest(identifier: "pr-12", content: content,
                                           trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
print("waiting")
try await Task.sleep(nanoseconds: 60_000_000_000)
print("no answer")
exit(1)
