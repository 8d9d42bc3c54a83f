// A command-line tool that waits for the completion handler, then quits from it.
import Foundation
import UserNotifications

let content = UNMutableNotificationContent()
content.title = "Pomodoro"
content.body = "Time for a 5 minute break"
content.sound = UNNotificationSound.default

let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 25 * 60, repeats: false)
let request = UNNotificationRequest(identifier: "pomodoro.break", content: content, trigger: trigger)

UNUserNotificationCenter.current().add(request) { error in
    if let error = error {
        print("Error: \(error.localizedDescription)")
        exit(1)
    }
    print("Break reminder set for 25 minutes from now")
    exit(0)
}

dispatchMain()
