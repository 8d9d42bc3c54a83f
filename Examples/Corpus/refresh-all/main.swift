// "Cancel everything, then rebuild": the simplest way apps keep their schedule right.
import Foundation
import UserNotifications

struct Task {
    let id: Int
    let title: String
    let due: Date
}

final class TaskReminders {
    let center = UNUserNotificationCenter.current()

    func rebuild(for tasks: [Task]) {
        center.removeAllPendingNotificationRequests()
        for task in tasks where task.due > Date() {
            let content = UNMutableNotificationContent()
            content.title = "Due soon"
            content.body = task.title
            content.userInfo = ["taskID": task.id]
            let seconds = task.due.timeIntervalSinceNow
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
            center.add(UNNotificationRequest(identifier: "task-\(task.id)", content: content, trigger: trigger))
        }
    }
}

let reminders = TaskReminders()
reminders.rebuild(for: [Task(id: 1, title: "Old task", due: Date().addingTimeInterval(7200)),
                        Task(id: 2, title: "Another", due: Date().addingTimeInterval(9000))])
reminders.rebuild(for: [Task(id: 3, title: "Pay rent", due: Date().addingTimeInterval(86400)),
                        Task(id: 4, title: "Done already", due: Date().addingTimeInterval(-60)),
                        Task(id: 5, title: "Call mum", due: Date().addingTimeInterval(3 * 3600))])
print("rebuilt")
