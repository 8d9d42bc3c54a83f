// swift-tools-version: 6.0
// Programs written as for iOS, run on Linux with `swift run NAME` (chime's daemon keeps and shows
// their notifications: `chime daemon &`, or installed, started by D-Bus on the first call).
import PackageDescription

let userNotifications: Target.Dependency = .product(name: "UserNotifications", package: "chime")

let package = Package(
    name: "chime-examples",
    dependencies: [.package(name: "chime", path: "..")],
    targets: [
        .executableTarget(name: "egg-timer", dependencies: [userNotifications]),
        .executableTarget(name: "weekday-alarm", dependencies: [userNotifications]),
        .executableTarget(name: "weekly-reminders", dependencies: [userNotifications]),
        .executableTarget(name: "check-authorization", dependencies: [userNotifications]),
    ]
)
