import NotifyTool
import ArgumentParser
import DBus
import Notifications

/// `chime capabilities`: what the running notification server can do.
public struct Capabilities: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "List what the notification server can do (GetCapabilities).",
        discussion: """
            Prints every capability of the spec with whether the server has it, then any
            vendor extensions it advertises. Where chime notify goes through the notification portal
            (inside Flatpak or Snap, or with NOTIFY_FORCE_PORTAL set), the portal has no capabilities
            to ask: chime lists what it passes on (as libnotify does) and says so.

            Examples:
              chime capabilities
              chime capabilities --json | jq -r '.capabilities[]'
            """)

    @Flag(help: "Print JSON: {\"capabilities\": [...]}.")
    var json = false

    public func run() throws {
        let connection = reportingErrors { try openSessionBus() }
        // Through the portal, what libnotify reports for it: the server behind it is not asked.
        if let portal = PortalUse.current(connection) {
            CapabilitiesReport(capabilities: PortalUse.capabilities, portal: portal).print(json: json)
            return
        }
        let capabilities = reportingErrors { try NotificationClient(connection: connection).capabilities() }
        CapabilitiesReport(capabilities: capabilities).print(json: json)
    }
}

/// `{"capabilities": [...]}`; in text, every capability of the spec with whether the server has it,
/// then its vendor extensions.
struct CapabilitiesReport: Report {
    var capabilities: [Capability]
    /// Set when chime notify goes through the notification portal (these are then the portal's).
    var portal: PortalUse? = nil

    func writeJSON(to out: inout PrintedOutput) {
        var fields = [Field("capabilities", "", .list(capabilities.map { .text($0.rawValue) }))]
        if let portal {
            fields.append(Field("portal", "", .record([Field("version", "", .count(Int64(portal.version))), Field("why", "", .text(portal.why))])))
        }
        Datum.writeRecord(fields, to: &out)
    }

    var lines: [String] {
        let width = (Capability.standard + capabilities).map(\.rawValue.count).max() ?? 0
        var lines = ["CAPABILITY".padding(width) + "  HAS  MEANING"]
        for capability in Capability.standard {
            let has = capabilities.contains(capability) ? "yes" : "no "
            lines.append(capability.rawValue.padding(width) + "  " + has + "  " + (capability.meaning ?? ""))
        }
        for capability in capabilities where !Capability.standard.contains(capability) {
            lines.append(capability.rawValue.padding(width) + "  yes  (vendor extension)")
        }
        if let portal { lines.append("(\(portal.line))") }
        return lines
    }
}
