// Schedule a few, cancel one by its identifier, list what is left.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
let medicines = ["morning-pill": 8, "noon-pill": 12, "evening-pill": 20]

for (identifier, hour) in medicines {
    let content = UNMutableNotificationContent()
    content.title = "Medication"
    content.body = "Time for your \(identifier.replacingOccurrences(of: "-", with: " "))"
    var components = DateComponents()
    components.hour = hour
    components.minute = 0
    let request = UNNotificationRequest(identifier: identifier, content: content,
                                        trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true))
    center.add(request)
}

center.removePendingNotificationRequests(withIdentifiers: ["noon-pill"])

center.getPendingNotificationRequests { requests in
    print(requests.map { $0.identifier }.sorted().joined(separator: " "))
    exit(0)
}
dispatchMain()
