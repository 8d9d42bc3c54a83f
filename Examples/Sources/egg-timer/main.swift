// An egg timer: `swift run egg-timer [SECONDS]` (default 300). Exits once it is set: the daemon
// shows it, whether or not this program still runs.
import Foundation
import UserNotifications

let seconds = CommandLine.arguments.dropFirst().first.flatMap(TimeInterval.init) ?? 300
let center = UNUserNotificationCenter.current()

guard try await center.requestAuthorization(options: [.alert, .sound, .badge]) else {
    print("Notifications are not allowed here: no notification server runs.")
    exit(1)
}

let content = UNMutableNotificationContent()
content.title = "Wait!"
content.body = "Your eggs are almost done!"
content.sound = UNNotificationSound.default

let trigger = UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
let request = UNNotificationRequest(identifier: UUID().uuidString, content: content, trigger: trigger)
try await center.add(request)
print("Eggs in \(Int(seconds)) s, at \(trigger.nextTriggerDate()!.formatted(date: .omitted, time: .standard)).")
