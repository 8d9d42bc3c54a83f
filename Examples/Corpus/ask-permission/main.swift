// Apple's "Asking permission to use notifications", in a tool.
import Foundation
import UserNotifications

let center = UNUserNotificationCenter.current()
center.requestAuthorization(options: [.alert, .sound, .badge]) { granted, error in
    if let error = error {
        // Handle the error here.
        print("error: \(error)")
    }
    // Enable or disable features based on the authorization.
    print(granted ? "allowed" : "not allowed")
    exit(granted ? 0 : 1)
}
dispatchMain()
