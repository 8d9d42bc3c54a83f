// Reading the pending requests with async/await and filtering by a prefix.
import Foundation
import UserNotifications

@main
struct PendingList {
    static func main() async throws {
        let center = UNUserNotificationCenter.current()
        for (index, name) in ["alpha", "beta", "gamma"].enumerated() {
            let content = UNMutableNotificationContent()
            content.title = "Sprint \(name)"
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: TimeInterval(3600 * (index + 1)), repeats: false)
            try await center.add(UNNotificationRequest(identifier: "sprint.\(name)", content: content, trigger: trigger))
        }
        let content = UNMutableNotificationContent()
        content.title = "Unrelated"
        try await center.add(UNNotificationRequest(identifier: "other", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
        let pending = await center.pendingNotificationRequests()
        let sprints = pending.filter { $0.identifier.hasPrefix("sprint.") }
        print("sprints: \(sprints.map(\.content.title).sorted().joined(separator: ", "))")
        let soonest = pending.compactMap { ($0.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval }.min() ?? 0
        print("shortest interval: \(Int(soonest))")
    }
}
