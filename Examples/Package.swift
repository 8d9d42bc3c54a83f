// swift-tools-version: 6.0
// Programs written as for iOS, run on Linux with `swift run NAME` (chime's daemon keeps and shows
// their notifications: `chime daemon &`, or installed, started by D-Bus on the first call).
//
// Sources/: the four examples. Corpus/: code as people write it for Apple's UserNotifications, in
// the styles of Apple's documentation and sample code and of popular tutorials (our own, none of it
// copied), compiled unchanged; the tests run each against the daemon (Tests/UserNotificationsTests/
// CorpusTests.swift). Most are in the Swift 5 language mode most such code is written in; the rest
// in Swift 6's.
import PackageDescription

let userNotifications: Target.Dependency = .product(name: "UserNotifications", package: "chime")

let examples = ["egg-timer", "weekday-alarm", "weekly-reminders", "check-authorization"]
let swift6 = ["top-level-await", "reminder-store", "pending-async", "ask-permission-async", "async-delegate", "protocol-for-tests",
              "error-handling", "image-attachment", "badge-count", "main-struct", "task-group", "ignored-answers"]
let swift5 = ["top-level-exit", "top-level-dispatch-main", "top-level-semaphore", "top-level-run-loop", "notification-manager",
              "daily-reminder", "weekday-reminders", "date-from-picker", "cancel-by-identifier", "refresh-all", "delivered-cleanup",
              "ask-permission", "settings-switch", "meeting-invite", "app-delegate", "quick-reply", "critical-sounds", "grouped-threads",
              "user-info", "only-usernotifications", "reply-subclass"]

let package = Package(
    name: "chime-examples",
    dependencies: [.package(name: "chime", path: "..")],
    targets: examples.map { .executableTarget(name: $0, dependencies: [userNotifications]) }
        + swift6.map { .executableTarget(name: $0, dependencies: [userNotifications], path: "Corpus/\($0)") }
        + swift5.map {
            .executableTarget(name: $0, dependencies: [userNotifications], path: "Corpus/\($0)", swiftSettings: [.swiftLanguageMode(.v5)])
        }
)
