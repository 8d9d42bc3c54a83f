// Waiting on a semaphore for the handler, as small tools do.
import Foundation
import UserNotifications

let semaphore = DispatchSemaphore(value: 0)
var failure: Error?

let content = UNMutableNotificationContent()
content.title = "Build finished"
content.subtitle = "chime"
content.body = "0 errors, 0 warnings"

let request = UNNotificationRequest(identifier: "build", content: content,
                                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false))
UNUserNotificationCenter.current().add(request) { error in
    failure = error
    semaphore.signal()
}
semaphore.wait()
if let failure {
    print("failed: \(failure)")
    exit(1)
}
print("notified")
