import Foundation

NotificationManager.shared.requestAuthorization { granted in
    print("granted: \(granted)")
    NotificationManager.shared.scheduleNotification(title: "Tea", body: "Your tea is ready", after: 2, identifier: "tea")
    NotificationManager.shared.scheduleNotification(title: "Laundry", body: "Move it to the dryer", after: 45 * 60, identifier: "laundry")
    NotificationManager.shared.scheduleNotification(title: "Oven", body: "Preheated", after: 600, identifier: "oven")
    NotificationManager.shared.cancelNotification(identifier: "oven")
    exit(0)
}
dispatchMain()
