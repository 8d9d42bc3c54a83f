// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "chime",
    products: [
        // `chime notify` and notify-send in a binary of their own (the D-Bus and notification layers
        // only); every other command is chime-commands, which chime hands them to.
        .executable(name: "chime", targets: ["chime"]),
        .executable(name: "chime-commands", targets: ["chime-commands"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "Notifications", targets: ["Notifications"]),
        // Apple's notification API on Linux, backed by chime's daemon: `import UserNotifications`.
        .library(name: "UserNotifications", targets: ["UserNotifications"]),
        // The desktop app (GTK 4 + libadwaita), a client of the daemon like the CLI: its own binary
        // and Debian package, so the command line never links GTK.
        .executable(name: "chime-alarms", targets: ["chime-alarms"]),
        // The readers of other people's input as fuzz targets: Fuzz/ (make fuzz) and the tests use them.
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // `make docs`: the UserNotifications documentation (DocC). A plugin only: nothing is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C modules (only DBus and Notifications see them)
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // zlib's header; the library is opened with dlopen when a PNG is first decoded (see its header).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),

        // SQLite is linked statically (libsqlite3.a from libsqlite3-dev; see its module map).
        .systemLibrary(name: "CSQLite"),
        .systemLibrary(name: "CLinux"),
        // libsndfile's and libpulse's headers only: the libraries are opened with dlopen (see its header).
        .systemLibrary(name: "CSound"),
        // Only chime-eds, the child that speaks to Evolution Data Server, sees libecal and GLib.
        .systemLibrary(
            name: "CEcal",
            pkgConfig: "libecal-2.0",
            providers: [.apt(["libecal2.0-dev"])]
        ),
        // Only the desktop app sees GTK.
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev"])]
        ),

        // MARK: - Libraries
        .target(name: "Posix", dependencies: ["CLinux"]),
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(name: "Notifications", dependencies: ["DBus", "CZlib", "Posix"]),
        // `chime notify` and notify-send (options, the Notify call or the portal's, waiting), exit
        // statuses and the CLI's output: all the `chime` binary holds.
        .target(name: "NotifyTool", dependencies: ["DBus", "Notifications", "Posix"]),
        .target(name: "Timekeeping"),
        // chime's own sound: files decoded by libsndfile, played through the sound server.
        .target(name: "Sound", dependencies: ["CSound", "Posix"]),
        .target(name: "ICalendar", dependencies: ["Posix", "Timekeeping"]),
        .target(name: "ChimeCenter", dependencies: ["DBus", "ICalendar", "Notifications", "Posix", "Timekeeping"]),
        // The daemon's client: UserNotificationCenter and its errors.
        .target(name: "ChimeClient", dependencies: ["ChimeCenter", "DBus", "Timekeeping"]),
        // The person's calendars as chime reads and writes them: iCalendar import and export,
        // answers that travel in events, holiday calendars.
        .target(name: "ChimeCalendars", dependencies: ["ChimeCenter", "ICalendar", "Notifications", "Posix", "Timekeeping"]),
        // Apple's API over ChimeCenter (Foundation is allowed here: the chime binary does not link it).
        .target(name: "UserNotifications", dependencies: ["ChimeCenter", "ChimeClient", "DBus", "Notifications", "Timekeeping"]),
        .target(name: "ChimeConfig", dependencies: ["ChimeCenter", "ChimeCalendars", "Notifications", "Timekeeping", "TOMLKit", "Posix"]),
        .target(name: "FuzzTargets", dependencies: ["ChimeCenter", "ChimeCalendars", "ChimeConfig", "DBus", "ICalendar", "Notifications", "Posix", "Sound", "Timekeeping"]),
        .target(
            name: "ChimeDaemon",
            dependencies: [
                "ChimeCenter", "ChimeCalendars", "ChimeConfig", "DBus", "ICalendar", "Notifications", "Timekeeping", "CSQLite", "Posix", "Sound",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: - The command-line tool
        .target(
            name: "ChimeCommands",
            dependencies: [
                "DBus", "Notifications", "NotifyTool", "Timekeeping", "ChimeCenter", "ChimeClient", "ChimeCalendars", "ChimeDaemon", "ChimeConfig", "Posix",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // chime keeps argv as glibc hands it over, instead of the static runtime's search for it (see argv.c).
        .target(name: "CArgv"),
        .executableTarget(name: "chime", dependencies: ["NotifyTool", "CArgv"]),
        .executableTarget(name: "chime-commands", dependencies: ["ChimeCommands"]),

        // MARK: - The desktop app
        // The thin Swift layer over GTK and libadwaita, as DBus is over libdbus.
        .target(name: "Gtk", dependencies: ["CGtk", "CListModel"]),
        // A list model that is only a count (GObject's type macros are C's).
        .target(name: "CListModel", dependencies: ["CGtk"]),
        .executableTarget(name: "chime-eds", dependencies: ["CEcal"]),
        // What the app shows and sends, without GTK (tested by `make check`).
        .target(name: "AlarmsModel", dependencies: ["ChimeCenter", "DBus", "Notifications", "Timekeeping", "Posix"]),
        .executableTarget(
            name: "chime-alarms",
            dependencies: ["Gtk", "AlarmsModel", "ChimeCenter", "ChimeClient", "DBus", "Notifications", "Timekeeping", "Posix"]),

        // The daemon under a deterministic simulator, checked against a model (`make simulate`).
        .executableTarget(name: "chime-simulate", dependencies: ["ChimeDaemon", "DBus", "Timekeeping"]),

        // MARK: - Benchmarks (run by `make bench`)
        .executableTarget(name: "chime-bench", dependencies: ["DBus", "Notifications"], path: "bench/swift"),
        .executableTarget(name: "chime-bench-nextfire", dependencies: ["Timekeeping", "ChimeCenter", "ChimeCalendars"], path: "bench/nextfire"),
        .executableTarget(
            name: "chime-bench-config", dependencies: ["ChimeConfig", "ChimeDaemon", "ChimeCenter", "ChimeClient", "DBus", "Timekeeping", "TOMLKit"],
            path: "bench/config", exclude: ["tomllib_parse.py"]),
        .executableTarget(
            name: "chime-bench-daemon", dependencies: ["ChimeDaemon", "ChimeCenter", "ChimeClient", "DBus", "Timekeeping"], path: "bench/daemon"),

        // MARK: - Tests
        .target(name: "TestSupport", dependencies: ["DBus", "Notifications", "Posix", "Timekeeping"]),
        .testTarget(name: "UserNotificationsTests", dependencies: ["UserNotifications", "DBus", "TestSupport"]),
        .testTarget(
            name: "DBusTests",
            dependencies: [
                "DBus", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TimekeepingTests",
            dependencies: [
                "Timekeeping", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "ChimeDaemonTests",
            dependencies: [
                "ChimeDaemon", "ChimeCenter", "ChimeClient", "ChimeCalendars", "Timekeeping", "TestSupport", "DBus", "Posix",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ChimeCenterTests",
            dependencies: [
                "ChimeCenter", "ChimeCalendars", "ICalendar", "Notifications", "Timekeeping", "DBus", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "ChimeConfigTests",
            dependencies: [
                "ChimeConfig", "ChimeCenter", "Timekeeping", "TestSupport", "FuzzTargets",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "SoundTests", dependencies: ["Sound", "TestSupport", "Posix"]),
        .testTarget(name: "AlarmsModelTests", dependencies: ["AlarmsModel", "ChimeCenter", "Notifications", "Timekeeping"]),
        .testTarget(name: "NotificationsTests", dependencies: ["Notifications", "DBus", "TestSupport"]),
        .testTarget(
            name: "ChimeCLITests",
            dependencies: [
                "ChimeCenter", "ChimeClient", "DBus", "Notifications", "NotifyTool", "ChimeCommands", "TestSupport", "Timekeeping",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Extension members come only from modules a file imports: Foundation, which TOMLKit imports, must
// not lend String its NSString methods (`contains("/")` once linked all of Foundation and ICU, 48 MB,
// into chime; `make release` checks that it stays out).
for target in package.targets where target.type != .system && target.type != .test {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
