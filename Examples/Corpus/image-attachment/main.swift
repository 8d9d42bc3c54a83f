// An image attachment from a file next to the program, and the error for a file that is not one.
import Foundation
import UserNotifications

let imageURL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("cover.png")
let content = UNMutableNotificationContent()
content.title = "New episode"
content.body = "Episode 12 is out"
do {
    let attachment = try UNNotificationAttachment(identifier: "cover", url: imageURL, options: nil)
    content.attachments = [attachment]
    print("attached \(attachment.identifier) (\(attachment.type))")
} catch {
    print("The attachment was not loaded: \(error)")
}
do {
    _ = try UNNotificationAttachment(identifier: "notes", url: URL(fileURLWithPath: "/etc/hostname"))
} catch let error as UNError {
    print("refused: \(error.code == .attachmentUnrecognizedType ? "unrecognized type" : "\(error.code)")")
}
try await UNUserNotificationCenter.current().add(UNNotificationRequest(identifier: "episode-12", content: content, trigger: nil))
