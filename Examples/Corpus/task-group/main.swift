// Many requests added at once from a task group.
import Foundation
import UserNotifications

@main
struct Planner {
    static func main() async throws {
        let center = UNUserNotificationCenter.current()
        let days = (1...7).map { day -> UNNotificationRequest in
            let content = UNMutableNotificationContent()
            content.title = "Plan day \(day)"
            var components = DateComponents()
            components.weekday = day
            components.hour = 8
            return UNNotificationRequest(identifier: "plan-\(day)", content: content,
                                         trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in days {
                group.addTask { try await center.add(request) }
            }
            try await group.waitForAll()
        }
        print("planned \(await center.pendingNotificationRequests().count)")
    }
}
