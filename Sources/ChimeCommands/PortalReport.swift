import DBus
import Notifications
import NotifyTool

/// Whether `chime notify` (and chime as notify-send) would go through the notification portal
/// here: inside a sandbox, or with NOTIFY_FORCE_PORTAL set, where a portal answers (never with
/// NOTIFY_IGNORE_PORTAL). `chime capabilities`, `server-info` and `status` say so.
struct PortalUse {
    var version: UInt32
    var sandbox: Sandbox

    static func current(_ connection: Connection) -> PortalUse? {
        let sandbox = Sandbox.current()
        guard sandbox.wantsPortal, let version = try? PortalClient(connection: connection).version() else { return nil }
        return PortalUse(version: version, sandbox: sandbox)
    }

    /// Why the portal is used: the sandbox, or the variable.
    var why: String {
        if let app = sandbox.flatpakApp { return "inside the Flatpak \(app)" }
        if let snap = sandbox.snapName { return "inside the Snap \(snap)" }
        return "NOTIFY_FORCE_PORTAL is set"
    }

    /// What the portal cannot do, in one line.
    static let limits = "no capabilities or server information (the server behind the portal is not asked), "
        + "no close signal, and -r replaces only this program's own numbered notification"

    /// The capabilities libnotify reports for the portal: what it passes on.
    static let capabilities: [Capability] = [.actions, .body, Capability(rawValue: "body-images"), Capability(rawValue: "icon-static")]

    /// The server information libnotify reports for the portal.
    var serverInformation: ServerInformation {
        ServerInformation(name: "Portal Notification", vendor: "Freedesktop", version: String(version), specVersion: "1.2")
    }

    /// `{"version", "why"}` for JSON, and one line for text.
    var datum: Datum { .record([Field("version", "", .count(Int64(version))), Field("why", "", .text(why))]) }
    var line: String { "notifications go through the notification portal (version \(version), \(why)): \(Self.limits)" }
}
