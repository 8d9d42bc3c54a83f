// Permission asked with async/await and its answer not looked at, as many apps do at launch (in a
// Task and at the top level): Apple's async methods may be called for their effect alone.
import UserNotifications

func askAtLaunch() async {
    do {
        try await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .sound, .badge])
    } catch {
        print("could not ask: \(error)")
    }
}

let center = UNUserNotificationCenter.current()
await askAtLaunch()
try await center.requestAuthorization(options: [.alert])
await center.notificationSettings()
await center.pendingNotificationRequests()
await center.deliveredNotifications()
await center.notificationCategories()
let content = UNMutableNotificationContent()
content.title = "Stretch"
try await center.add(UNNotificationRequest(identifier: "stretch", content: content,
                                           trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1800, repeats: false)))
print("asked and scheduled")
