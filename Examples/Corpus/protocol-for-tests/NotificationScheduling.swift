// Code made testable the usual way: a protocol that mirrors the center's methods, which the real
// center conforms to with an empty extension. It compiles only if every signature is Apple's.
import Foundation
import UserNotifications

protocol NotificationScheduling: AnyObject {
    var delegate: (any UNUserNotificationCenterDelegate)? { get set }
    func requestAuthorization(options: UNAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)
    func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void)
    func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)?)
    func add(_ request: UNNotificationRequest) async throws
    func getPendingNotificationRequests(completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void)
    func pendingNotificationRequests() async -> [UNNotificationRequest]
    func removePendingNotificationRequests(withIdentifiers identifiers: [String])
    func removeAllPendingNotificationRequests()
    func setNotificationCategories(_ categories: Set<UNNotificationCategory>)
    func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)?)
}

extension UNUserNotificationCenter: NotificationScheduling {}

final class Scheduler {
    let center: any NotificationScheduling
    init(center: any NotificationScheduling = UNUserNotificationCenter.current()) {
        self.center = center
    }

    func scheduleCheckIn(after seconds: TimeInterval) async throws {
        let content = UNMutableNotificationContent()
        content.title = "Check in"
        content.body = "How are you feeling?"
        try await center.add(UNNotificationRequest(identifier: "check-in", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)))
    }

    func count() async -> Int { await center.pendingNotificationRequests().count }
}
