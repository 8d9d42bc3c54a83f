import Foundation
import Testing
import UserNotifications

/// Apple's notification objects are NSSecureCoding: an app archives a request (to keep it, or to
/// hand it to another process) and reads it back. So do chime's, with Foundation's keyed archiver.
@Suite struct ArchivingTests {
    func roundTrip<T: NSObject & NSSecureCoding>(_ object: T, as type: T.Type = T.self) throws -> T {
        let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: type, from: data))
    }

    @Test func aRequestWithEveryPartReadsBackTheSame() throws {
        let content = UNMutableNotificationContent()
        content.title = "Standup"
        content.subtitle = "Room 4"
        content.body = "Bring the numbers"
        content.badge = 3
        content.sound = .criticalSoundNamed(UNNotificationSoundName("bell.oga"), withAudioVolume: 0.4)
        content.userInfo = ["team": "core", "count": 4]
        content.categoryIdentifier = "meeting"
        content.threadIdentifier = "work"
        content.interruptionLevel = .timeSensitive
        content.relevanceScore = 0.5
        content.targetContentIdentifier = "standup-view"
        var components = DateComponents()
        components.weekday = 2
        components.hour = 9
        components.minute = 30
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        let request = UNNotificationRequest(identifier: "standup", content: content, trigger: trigger)

        let read = try roundTrip(request)
        #expect(read.identifier == "standup")
        #expect(read.content.title == "Standup" && read.content.body == "Bring the numbers" && read.content.categoryIdentifier == "meeting")
        #expect(read.content.threadIdentifier == "work" && read.content.interruptionLevel == .timeSensitive)
        #expect(read.content.userInfo["team"] as? String == "core")
        #expect(read.content.subtitle == "Room 4" && read.content.badge == 3 && read.content.relevanceScore == 0.5)
        #expect(read.content.targetContentIdentifier == "standup-view")
        #expect(read.content.userInfo["count"] as? String == "4", "user info is kept as text, as the daemon keeps it")
        #expect(read.content.sound?.isEqual(content.sound) == true)
        let readTrigger = try #require(read.trigger as? UNCalendarNotificationTrigger)
        #expect(readTrigger.repeats && readTrigger.dateComponents == components)
        #expect(readTrigger.nextTriggerDate() == trigger.nextTriggerDate())
    }

    @Test func triggersCategoriesAndActionsReadBack() throws {
        let interval = try roundTrip(UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: true))
        #expect(interval.timeInterval == 3600 && interval.repeats)
        let reply = UNTextInputNotificationAction(identifier: "reply", title: "Reply", options: [.foreground],
                                                 icon: UNNotificationActionIcon(systemImageName: "arrowshape.turn.up.left"),
                                                 textInputButtonTitle: "Send", textInputPlaceholder: "Message")
        let done = UNNotificationAction(identifier: "done", title: "Done", options: [.destructive])
        let category = UNNotificationCategory(identifier: "chat", actions: [reply, done], intentIdentifiers: ["send"],
                                              hiddenPreviewsBodyPlaceholder: "%u messages", categorySummaryFormat: "%u more",
                                              options: [.customDismissAction])
        let read = try roundTrip(category)
        #expect(read.identifier == "chat" && read.intentIdentifiers == ["send"] && read.options == [.customDismissAction])
        #expect(read.hiddenPreviewsBodyPlaceholder == "%u messages" && read.categorySummaryFormat == "%u more")
        #expect(read.actions.map(\.identifier) == ["reply", "done"])
        let readReply = try #require(read.actions.first as? UNTextInputNotificationAction)
        #expect(readReply.textInputButtonTitle == "Send" && readReply.textInputPlaceholder == "Message" && readReply.options == [.foreground])
        #expect(readReply.icon != nil)
        #expect(read.actions.last?.options == [.destructive])
    }

    /// An archive is input like any other: one that says a repeating interval under a minute (which
    /// the initializer refuses) reads as nothing, not as a trigger that would stop the program.
    @Test func anArchiveOfAnImpossibleTriggerReadsAsNothing() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: true),
                                                    requiringSecureCoding: true)
        // The archive's objects, with the interval's 3600 made 5.
        var plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        var objects = try #require(plist["$objects"] as? [Any])
        var changed = false
        for (index, object) in objects.enumerated() {
            guard var fields = object as? [String: Any], fields["timeInterval"] != nil else { continue }
            fields["timeInterval"] = 5.0
            objects[index] = fields
            changed = true
        }
        #expect(changed)
        plist["$objects"] = objects
        let forged = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let read = try? NSKeyedUnarchiver.unarchivedObject(ofClass: UNTimeIntervalNotificationTrigger.self, from: forged)
        #expect(read == nil)
    }
}

