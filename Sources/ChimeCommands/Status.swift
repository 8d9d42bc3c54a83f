import NotifyTool
import ArgumentParser
import ChimeCenter
import ChimeClient
import Timekeeping
import DBus
import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// `chime status`: what notifications can do here, like `getNotificationSettings`.
public struct Status: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "Show whether notifications are authorized here and what they can do.",
        discussion: """
            Asks the running notification server for its capabilities: they are the authorization. \
            Sound is available when the server plays sounds or chime finds a local player \
            (\(soundPlayers.joined(separator: ", "))).

            When `chime daemon` runs, it also says what the daemon made of the alarm file: how many \
            alarms it runs from it, and every error of the file's last edit (the alarms of its last good \
            version keep running until it is fixed), and for a laptop: Sleep (whether it follows logind's \
            sleep signal), Wake (whether --wake alarms can wake the machine here, how, or why not and what \
            to do), Stay awake (whether it holds logind's block lock for a wake alarm now) and Do not \
            disturb (the server's own switch, read from it, and what alarms do while it is on).

            Exits 0 when authorized, 69 when no server runs, 78 when the daemon's alarm file has errors.

            Examples:
              chime status
              chime status --json
            """)

    @Flag(help: "Print the settings as JSON.")
    var json = false

    public func run() throws {
        let connection = reportingErrors { try openSessionBus() }
        let settings = reportingErrors { try notificationSettings(connection: connection) }
        // The daemon's view of the alarm file; nil when no daemon runs. Asked only of a running
        // daemon: a status query should not start one through D-Bus activation.
        var file: AlarmFileStatus?
        var daemon: DaemonStatus?
        var away: [(away: DaysOff.Away, fromFile: Bool)]?
        do {
            if try connection.nameHasOwner(SchedulerInterface.busName) {
                let center = UserNotificationCenter(connection: connection)
                file = try center.alarmFileStatus()
                daemon = try center.daemonStatus()
                away = try center.away()
            } else {
                (file, daemon) = (nil, nil)
            }
        } catch SchedulerError.noScheduler {
            (file, daemon) = (nil, nil)
        } catch {
            ExitStatus.fail(error)
        }
        let portal = PortalUse.current(connection)
        Self.report(settings, daemon: daemon, file: file, portal: portal, away: away).print(json: json)
        // Through the portal notifications are shown even where the server cannot be asked.
        if !settings.isAuthorized && portal == nil { Sys.exit(ExitStatus.noNotificationServer.rawValue) }
        if let file, !file.problems.isEmpty { Sys.exit(ExitStatus.configError.rawValue) }
    }
}

extension Status {
    /// What notifications can do here and, when it runs, what the daemon reports (docs/json.md).
    static func report(_ settings: NotificationSettings, daemon: DaemonStatus?, file: AlarmFileStatus?, portal: PortalUse? = nil,
                       away: [(away: DaysOff.Away, fromFile: Bool)]? = nil, now: Instant = WallClock.system.now()) -> RecordReport {
        let zone = Zone.system()
        let current = away?.filter { $0.away.until > now }
        func flag(_ s: Setting) -> Datum { .flag(s == .enabled) }
        var reason: String?
        if case .denied(let why) = settings.authorizationStatus { reason = why }
        let sound: Datum = switch settings.sound {
        case .byServer: .record([Field("by", "", .text("server")), Field("player", "", .none), Field("path", "", .none)])
        case .localPlayer(let name, let path): .record([Field("by", "", .text("chime")), Field("player", "", .text(name)), Field("path", "", .text(path))])
        case .soundServer(let name): .record([Field("by", "", .text("chime")), Field("player", "", .text(name)), Field("path", "", .none)])
        case .notSupported: .record([Field("by", "", .text("none")), Field("player", "", .none), Field("path", "", .none)])
        }
        let notes = settings.isAuthorized ? ServerWays.notes(for: settings.server, capabilities: settings.capabilities) : []
        let daemonDatum: Datum = daemon.map { daemon in
            .record([
                Field("version", "", .text(daemon.version)), Field("pending", "", .count(Int64(daemon.pending))),
                Field("sleep", "Sleep", .text(daemon.sleep)), Field("wake", "Wake", .text(daemon.wake)),
                Field("wakeMethod", "", .text(daemon.wakeMethod)), Field("stayAwake", "Stay awake", .text(daemon.stayAwake)),
                Field("doNotDisturb", "Do not disturb", .text(daemon.doNotDisturb)),
                Field("sound", "Sounds", .text(daemon.sound)),
                Field("quarantined", "", .list(daemon.quarantined.map { .record([Field("id", "", .text($0.identifier)), Field("reason", "", .text($0.reason))]) })),
                Field("storeWarnings", "", .list(daemon.storeWarnings.map { .text($0) })),
            ])
        } ?? .none
        return RecordReport(fields: [
            Field("authorization", "Authorization", .text(settings.isAuthorized ? "authorized" : "denied")),
            Field("reason", "Reason", .optional(reason) { .text($0) }),
            Field("server", "Server", .optional(settings.server) { server in
                .record([Field("name", "", .text(server.name)), Field("vendor", "", .text(server.vendor)),
                         Field("version", "", .text(server.version)), Field("specVersion", "", .text(server.specVersion))])
            }) { server in
                guard let name = server["name"]?.text else { return nil }
                return "\(name) \(server["version"]?.text ?? "") by \(server["vendor"]?.text ?? ""), spec \(server["specVersion"]?.text ?? "")"
            },
            Field("alert", "Alerts", flag(settings.alert)),
            Field("sound", "Sound", sound) { sound in
                switch sound["by"]?.text {
                case "server": "yes (played by the server)"
                case "chime": "yes (played by chime with \(sound["player"]?.text ?? ""))"
                default: "no (the server plays no sounds and no player was found)"
                }
            },
            Field("actions", "Actions", flag(settings.actions)), Field("bodyMarkup", "Body markup", flag(settings.bodyMarkup)),
            Field("hyperlinks", "Hyperlinks", flag(settings.hyperlinks)), Field("images", "Body images", flag(settings.images)),
            Field("persistence", "Persistence", flag(settings.persistence)),
            Field("badge", "Badges", .flag(false)) { _ in "no (not on this desktop)" },
            Field("capabilities", "", .list(settings.capabilities.map { .text($0.rawValue) })) { _ in nil },
            Field("serverNotes", "This server", .list(notes.map { .text($0) })) { notes in
                notes.items.isEmpty ? nil : "\n" + notes.items.compactMap(\.text).map { "  " + $0 }.joined(separator: "\n")
            },
            Field("daemon", "Daemon", daemonDatum) { daemon in
                guard daemon["version"] != nil else {
                    return "not running (chime daemon &, systemctl --user start chime, or any alarm command where D-Bus activation is installed)"
                }
                var lines = ["running (chime \(daemon["version"]?.text ?? ""), \(daemon["pending"]?.text ?? "0") pending)"]
                for key in ["sleep", "wake", "stayAwake", "doNotDisturb", "sound"] {
                    guard case .record(let fields) = daemon, let field = fields.first(where: { $0.key == key }),
                        let text = field.text, !text.isEmpty
                    else { continue }
                    lines.append((field.label + ":").padding(16) + text)
                }
                for warning in daemon["storeWarnings"]?.items ?? [] { lines.append("  " + (warning.text ?? "")) }
                let quarantined = daemon["quarantined"]?.items ?? []
                if !quarantined.isEmpty {
                    lines.append("Quarantined:    \(quarantined.count) alarm\(quarantined.count == 1 ? "" : "s") kept but not fired (chime cancel ID removes one)")
                    for item in quarantined { lines.append("  \(item["id"]?.text ?? ""): \(item["reason"]?.text ?? "")") }
                }
                return lines.joined(separator: "\n")
            },
            Field("alarmFile", "Alarm file", file.map(alarmFileDatum) ?? .none) { _ in
                guard let file else { return nil }
                return ([alarmFileSummary(file)] + (file.problems + file.conflicts + file.calendars).map { "  " + $0 }).joined(separator: "\n")
            },
            Field("portal", "Portal", .optional(portal) { $0.datum }) { _ in portal.map { "chime notify: " + $0.line } },
            // Time away set (chime off, the alarm file's [[off]]), ahead or now; null when no daemon runs.
            Field("away", "Time away", .optional(current) { items in
                .list(items.map { item in
                    .record([Field("from", "", .instant(item.away.from, zone)), Field("until", "", .instant(item.away.until, zone)),
                             Field("alarms", "", .optional(item.away.alarms) { .list($0.sorted().map { .text($0) }) }),
                             Field("fromFile", "", .flag(item.fromFile))])
                })
            }) { _ in
                guard let current, !current.isEmpty else { return current == nil ? nil : "none" }
                return AwayReport(away: current, zone: zone, now: now).lines.joined(separator: "\n")
            },
        ], width: 16)
    }
}
