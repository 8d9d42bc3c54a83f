import DBus
import Foundation
import Testing
import TestSupport

/// `chime` against dunst, a real notification server, under Xvfb.
@Suite struct DunstCLITests {
    let session: DunstSession
    var bus: PrivateBus { session.bus }
    var dunst: Dunst { session.dunst }

    init() throws { session = try DunstSession() }

    func finish() { session.stop() }

    @Test func serverInfoAndCapabilities() throws {
        defer { finish() }
        let info = try runChime(["server-info"], environment: bus.environment())
        #expect(info.status == 0)
        #expect(info.stdoutLines.first == "Name:          dunst")
        let json = try runChime(["server-info", "--json"], environment: bus.environment())
        #expect(json.stdout.hasPrefix("{\"name\":\"dunst\",\"vendor\":\"knopwob\",\"version\":\""))
        let table = try runChime(["capabilities"], environment: bus.environment())
        #expect(table.stdoutLines.first?.hasPrefix("CAPABILITY") == true)
        #expect(table.stdoutLines.contains { $0.hasPrefix("actions ") && $0.contains(" yes ") })
        #expect(table.stdoutLines.contains { $0.hasPrefix("sound ") && $0.contains(" no ") })
        let caps = try runChime(["capabilities", "--json"], environment: bus.environment())
        #expect(caps.stdout.hasPrefix("{\"capabilities\":[") && caps.stdout.contains("\"actions\""))
    }

    @Test func anActionInvokedInDunstReachesChime() throws {
        defer { finish() }
        let control = try bus.connect()
        let result = try runChime(["notify", "-A", "default=Open", "-A", "later=Later", "-t", "0", "Alarm", "Homeroom"],
                                  environment: bus.environment()) { pid in
            // dunstctl action 0: invoke the default action of the newest popup, once it is on screen.
            let deadline = Date().addingTimeInterval(30)  // a bound for a failure only
            while Date() < deadline {
                if processHasExited(pid) { return }
                _ = try? control.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                      interface: "org.dunstproject.cmd0", member: "NotificationAction", arguments: [.uint32(0)])
                usleep(100_000)
            }
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "default\n")
    }

    @Test func replacingKeepsTheIdAndClosingIsSeen() throws {
        defer { finish() }
        let first = try runChime(["notify", "-p", "Download", "10%"], environment: bus.environment())
        let id = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(id) != nil)
        let again = try runChime(["notify", "-p", "-r", id, "Download", "90%"], environment: bus.environment())
        #expect(again.stdout == first.stdout)
        // dunst expires it after -t; chime sees NotificationClosed with reason 1.
        let expired = try runChime(["notify", "-w", "--json", "-t", "300", "Short"], environment: bus.environment())
        #expect(expired.status == 0)
        #expect(expired.stdout.contains("\"closed\":{\"reason\":\"expired\",\"code\":1}"))
    }

    @Test func theServerDyingWhileWaitingEndsTheWait() throws {
        let control = try bus.connect()
        let result = try runChime(["notify", "-w", "--json", "-t", "0", "Waiting"], environment: bus.environment()) { pid in
            // Killed once the popup is on screen (chime is waiting then), however long chime takes to start.
            _ = waitUntil {
                let shown = try? control.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                              arguments: [.string("org.dunstproject.cmd0"), .string("displayedLength")])
                return processHasExited(pid) || (shown?.first?.unwrappingVariants.uint32Value ?? 0) > 0
            }
            dunst.kill()
        }
        finish()
        #expect(result.status == 4)
        #expect(result.stderr == "chime: the notification server left the bus while waiting\n")
        #expect(result.stdout.contains("\"serverGone\":true"))
    }
}

/// Whether `pid` has exited (it stays a zombie until reaped).
func processHasExited(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
}
