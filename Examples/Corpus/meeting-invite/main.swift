// Apple's "Declaring your actionable notification types": a meeting invitation with Accept and
// Decline, and the meeting's details in userInfo.
import Foundation
import UserNotifications

// Define the custom actions.
let acceptAction = UNNotificationAction(identifier: "ACCEPT_ACTION", title: "Accept", options: [])
let declineAction = UNNotificationAction(identifier: "DECLINE_ACTION", title: "Decline", options: [])
// Define the notification type
let meetingInviteCategory = UNNotificationCategory(identifier: "MEETING_INVITATION",
                                                   actions: [acceptAction, declineAction],
                                                   intentIdentifiers: [],
                                                   hiddenPreviewsBodyPlaceholder: "",
                                                   options: .customDismissAction)
// Register the notification type.
let notificationCenter = UNUserNotificationCenter.current()
notificationCenter.setNotificationCategories([meetingInviteCategory])

let content = UNMutableNotificationContent()
content.title = "Weekly Staff Meeting"
content.body = "Every Tuesday at 2pm"
content.userInfo = ["MEETING_ID": "meeting-42", "USER_ID": "user-7"]
content.categoryIdentifier = "MEETING_INVITATION"

let request = UNNotificationRequest(identifier: "invite-42", content: content,
                                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false))
notificationCenter.add(request) { error in
    print(error == nil ? "invited" : "error: \(error!)")
    notificationCenter.getNotificationCategories { categories in
        print("categories: \(categories.map(\.identifier).sorted())")
        exit(0)
    }
}
dispatchMain()
