import ArgumentParser
import ChimeCenter
import DBus
import Notifications
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
        do {
            if try connection.nameHasOwner(SchedulerInterface.busName) {
                let center = UserNotificationCenter(connection: connection)
                file = try center.alarmFileStatus()
                daemon = try center.daemonStatus()
            } else {
                (file, daemon) = (nil, nil)
            }
        } catch is NoSchedulerError {
            (file, daemon) = (nil, nil)
        } catch {
            ExitStatus.fail(error)
        }
        func word(_ s: Setting) -> String { s == .enabled ? "yes" : "no" }
        let sound: (text: String, json: JSON) = {
            switch settings.sound {
            case .byServer: ("yes (played by the server)", .object([("by", .string("server"))]))
            case .localPlayer(let name, let path):
                ("yes (played by chime with \(name))", .object([("by", .string("chime")), ("player", .string(name)), ("path", .string(path))]))
            case .notSupported: ("no (the server plays no sounds and no player was found)", .bool(false))
            }
        }()
        let status: String
        var reason: String? = nil
        switch settings.authorizationStatus {
        case .authorized: status = "authorized"
        case .denied(let why):
            status = "denied"
            reason = why
        }
        if json {
            var fields: [(String, JSON)] = [("authorization", .string(status))]
            if let reason { fields.append(("reason", .string(reason))) }
            if let server = settings.server {
                fields.append(("server", .object([
                    ("name", .string(server.name)), ("vendor", .string(server.vendor)),
                    ("version", .string(server.version)), ("specVersion", .string(server.specVersion)),
                ])))
            }
            fields += [
                ("alert", .bool(settings.alert == .enabled)), ("sound", sound.json),
                ("actions", .bool(settings.actions == .enabled)), ("bodyMarkup", .bool(settings.bodyMarkup == .enabled)),
                ("hyperlinks", .bool(settings.hyperlinks == .enabled)), ("images", .bool(settings.images == .enabled)),
                ("persistence", .bool(settings.persistence == .enabled)), ("badge", .bool(false)),
                ("capabilities", .array(settings.capabilities.map { .string($0.rawValue) })),
                ("serverNotes", .array(ServerWays.notes(for: settings.server, capabilities: settings.capabilities).map { .string($0) })),
                ("daemon", .bool(file != nil)),
            ]
            if let file { fields.append(("alarmFile", alarmFileJSON(file))) }
            if let daemon {
                fields.append(("quarantined", .array(daemon.quarantined.map { .object([("id", .string($0.identifier)), ("reason", .string($0.reason))]) })))
                fields.append(("storeWarnings", .array(daemon.storeWarnings.map { .string($0) })))
                fields.append(("sleep", .string(daemon.sleep)))
                fields.append(("wake", .string(daemon.wake)))
                fields.append(("wakeMethod", .string(daemon.wakeMethod)))
                fields.append(("stayAwake", .string(daemon.stayAwake)))
                fields.append(("doNotDisturb", .string(daemon.doNotDisturb)))
            }
            printLine(JSON.object(fields).text)
        } else {
            print("Authorization:  \(status)" + (reason.map { " (\($0))" } ?? ""))
            if let server = settings.server {
                print("Server:         \(server.name) \(server.version) by \(server.vendor), spec \(server.specVersion)")
            }
            print("Alerts:         \(word(settings.alert))")
            print("Sound:          \(sound.text)")
            print("Actions:        \(word(settings.actions))")
            print("Body markup:    \(word(settings.bodyMarkup))")
            print("Hyperlinks:     \(word(settings.hyperlinks))")
            print("Body images:    \(word(settings.images))")
            print("Persistence:    \(word(settings.persistence))")
            print("Badges:         no (not on this desktop)")
            let notes = settings.isAuthorized ? ServerWays.notes(for: settings.server, capabilities: settings.capabilities) : []
            if !notes.isEmpty {
                print("This server:")
                for note in notes { print("  " + note) }
            }
            if let file, let daemon {
                print("Daemon:         running (chime \(daemon.version), \(daemon.pending) pending)")
                if !daemon.sleep.isEmpty { print("Sleep:          \(daemon.sleep)") }
                if !daemon.wake.isEmpty { print("Wake:           \(daemon.wake)") }
                if !daemon.stayAwake.isEmpty { print("Stay awake:     \(daemon.stayAwake)") }
                if !daemon.doNotDisturb.isEmpty { print("Do not disturb: \(daemon.doNotDisturb)") }
                for warning in daemon.storeWarnings { print("  " + warning) }
                if !daemon.quarantined.isEmpty {
                    print("Quarantined:    \(daemon.quarantined.count) alarm\(daemon.quarantined.count == 1 ? "" : "s") kept but not fired (chime cancel ID removes one)")
                    for (id, reason) in daemon.quarantined { print("  \(id): \(reason)") }
                }
                print("Alarm file:     \(alarmFileSummary(file))")
                for line in file.problems + file.conflicts { print("  " + line) }
            } else {
                print("Daemon:         not running (chime daemon &, systemctl --user start chime, or any alarm command where D-Bus activation is installed)")
            }
        }
        if !settings.isAuthorized { Glibc.exit(ExitStatus.noNotificationServer.rawValue) }
        if let file, !file.problems.isEmpty { Glibc.exit(ExitStatus.configError.rawValue) }
    }
}
