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
            vendor extensions it advertises.

            Examples:
              chime capabilities
              chime capabilities --json | jq -r '.capabilities[]'
            """)

    @Flag(help: "Print JSON: {\"capabilities\": [...]}.")
    var json = false

    public func run() throws {
        let capabilities = reportingErrors {
            try NotificationClient(connection: try openSessionBus()).capabilities()
        }
        CapabilitiesReport(capabilities: capabilities).print(json: json)
    }
}

/// `{"capabilities": [...]}`; in text, every capability of the spec with whether the server has it,
/// then its vendor extensions.
struct CapabilitiesReport: Report {
    var capabilities: [Capability]

    var json: JSON { .object([("capabilities", .array(capabilities.map { .string($0.rawValue) }))]) }

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
        return lines
    }
}
