import Foundation
import UserNotifications

let appDelegate = AppDelegate()
appDelegate.applicationDidFinishLaunching()
appDelegate.onResponse = { answer in
    print(answer)
    exit(0)
}

let content = UNMutableNotificationContent()
content.title = "Wake up"
content.body = "07:00"
content.categoryIdentifier = "ALARM"
UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "wake", content: content,
                                                             trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
dispatchMain()
