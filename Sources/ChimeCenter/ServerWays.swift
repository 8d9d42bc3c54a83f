import Notifications

/// The ways of the notification servers people run, as chime's compatibility matrix measured them
/// on each server Debian packages (`make test-desktops`, docs/SERVERS.md), and what chime does
/// about each. `chime status` prints them for the running server.
public enum ServerWays {
    /// The servers the matrix ran, by the name each gives in GetServerInformation.
    public enum Known: String, CaseIterable, Sendable {
        case gnomeShell = "gnome-shell"
        case plasma = "Plasma"
        case dunst
        case mako
        case swaync = "SwayNotificationCenter"
        case xfce = "Xfce Notify Daemon"
        case lxqt = "lxqt-notificationd"
        /// GNOME's notification-daemon and MATE's both call themselves this; the vendor tells them apart.
        case notificationDaemon = "Notification Daemon"
    }

    /// What will and will not work with this server, each with what chime does about it; the
    /// lines that follow from its capabilities first, then what the matrix found of it by name.
    public static func notes(for server: ServerInformation?, capabilities: [Capability]) -> [String] {
        var notes: [String] = []
        if !capabilities.contains(.actions) {
            notes.append("no buttons: alarms show without Snooze and Dismiss (chime cancel ID stops one)")
        }
        if capabilities.contains(.persistence) {
            notes.append("keeps notifications in its list after the popup goes: chime notify --wait lasts until you "
                + "clear it there, so give --wait-timeout")
        }
        guard let server, let known = Known(rawValue: server.name) else { return notes }
        switch known {
        case .gnomeShell:
            notes.append("ignores expire times: chime closes an alarm itself when its --expire passes")
            notes.append("shows no banner for low urgency (only its list): chime's alarms are critical")
            notes.append("lets only the program that showed a notification close it while that program runs: "
                + "chime notify -C from another shell is refused (\"Invalid notification ID\")")
        case .plasma:
            notes.append("refuses a notification identical to the one before within a second: chime sends it "
                + "again at once with a change nobody sees (a zero-width space)")
            notes.append("keeps critical popups up: chime closes an alarm when its --expire passes")
        case .notificationDaemon where server.vendor == "GNOME":
            notes.append("ignores expire times: chime closes an alarm itself when its --expire passes")
        case .swaync:
            notes.append("ignores expire times: chime closes an alarm itself when its --expire passes")
        case .notificationDaemon, .xfce, .lxqt:
            notes.append("keeps critical popups up: chime closes an alarm when its --expire passes")
        case .mako:
            notes.append("keeps a popup without an expire time until it is dismissed (default-timeout=0)")
        case .dunst:
            break
        }
        return notes
    }
}
