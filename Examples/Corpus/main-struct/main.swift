// An `@main` type with an async main: inside a function, `try await center.add` is the async one.
import Foundation
import UserNotifications

@main
struct Countdown {
    static func main() async throws {
        let seconds = CommandLine.arguments.dropFirst().first.flatMap(TimeInterval.init) ?? 10
        let center = UNUserNotificationCenter.current()
        let content = UNMutableNotificationContent()
        content.title = "Countdown"
        content.body = "\(Int(seconds)) seconds are up"
        let request = UNNotificationRequest(identifier: "countdown", content: content,
                                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false))
        try await center.add(request)
        print("counting down \(Int(seconds)) s")
    }
}
