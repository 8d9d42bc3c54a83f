// A main-actor model with async methods, in Swift 6 style.
import Foundation
import UserNotifications

struct Reminder: Identifiable, Sendable {
    let id: String
    var title: String
    var hour: Int
    var minute: Int
}

@MainActor
final class ReminderStore {
    private(set) var reminders: [Reminder] = []
    private(set) var isAuthorized = false
    private let center = UNUserNotificationCenter.current()

    func requestAccess() async {
        do {
            isAuthorized = try await center.requestAuthorization(options: [.alert, .sound])
        } catch {
            isAuthorized = false
        }
    }

    func save(_ reminder: Reminder) async throws {
        let content = UNMutableNotificationContent()
        content.title = reminder.title
        content.sound = .default
        var date = DateComponents()
        date.hour = reminder.hour
        date.minute = reminder.minute
        let trigger = UNCalendarNotificationTrigger(dateMatching: date, repeats: true)
        try await center.add(UNNotificationRequest(identifier: reminder.id, content: content, trigger: trigger))
        reminders.removeAll { $0.id == reminder.id }
        reminders.append(reminder)
    }

    func delete(_ reminder: Reminder) {
        center.removePendingNotificationRequests(withIdentifiers: [reminder.id])
        reminders.removeAll { $0.id == reminder.id }
    }

    func scheduledIdentifiers() async -> [String] {
        await center.pendingNotificationRequests().map(\.identifier).sorted()
    }
}
