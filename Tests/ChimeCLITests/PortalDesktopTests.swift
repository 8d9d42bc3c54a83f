import DBus
import Foundation
import Testing
import TestSupport

/// The whole way a sandboxed notify-send takes on a desktop, with Debian's own parts: `chime notify`
/// inside a bubblewrap sandbox that has a /.flatpak-info (no variable set), xdg-desktop-portal 1.16
/// with xdg-desktop-portal-gtk as its notification backend, and dunst showing the popup; a click on
/// it (dunstctl) comes back the same way as the action.
@Suite(.serialized) struct PortalDesktopTests {
    @Test func sandboxedNotifyReachesDunstAndHearsTheClick() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dunst = try Dunst(bus: bus)
        defer { dunst.stop() }
        // gtk.portal serves GNOME: the backend is chosen by XDG_CURRENT_DESKTOP.
        let environment = bus.environment(extra: ["DISPLAY": dunst.display.display, "XDG_CURRENT_DESKTOP": "GNOME", "GDK_BACKEND": "x11"])
        let backend = try ChildProcess("/usr/libexec/xdg-desktop-portal-gtk", [], environment: environment, logDirectory: bus.directory)
        defer { backend.stop() }
        try bus.waitForName("org.freedesktop.impl.portal.desktop.gtk")
        let portal = try ChildProcess("/usr/libexec/xdg-desktop-portal", [], environment: environment, logDirectory: bus.directory)
        defer { portal.stop() }
        try bus.waitForName("org.freedesktop.portal.Desktop")

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try flatpakSandbox(app: "org.example.Notes", in: directory)
        func sandboxed(_ arguments: [String], whileRunning: ((Int32) -> Void)? = nil) throws -> CommandResult {
            try runProgram("/usr/bin/bwrap", (sandbox + [chimeBinaryPath(), "notify"] + arguments)
                .map { Array($0.utf8) }, environment: bus.environment(), whileRunning: whileRunning)
        }
        let dunstctl = { (arguments: [String]) in
            try runProgram("/usr/bin/dunstctl", arguments.map { Array($0.utf8) }, environment: environment)
        }

        let shown = try sandboxed(["--json", "From a sandbox", "through the portal"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == "{\"id\":1,\"portalID\":\"libnotify-flatpak.org.example.Notes-chime-1\"}\n")
        #expect(waitUntil(30) { (try? dunstctl(["count", "displayed"]))?.stdout == "1\n" })
        // dunst heard it from the portal's backend, with the app's id as its desktop entry.
        _ = try dunstctl(["close-all"])
        let history = try dunstctl(["history"]).stdout
        #expect(history.contains("From a sandbox") && history.contains("through the portal"), "\(history)")

        // Clicking the popup invokes its default action; the portal tells the sandboxed chime.
        let clicked = try sandboxed(["--json", "-A", "default=Open", "-A", "later=Later", "Click me"]) { _ in
            guard waitUntil(30, { (try? dunstctl(["count", "displayed"]))?.stdout == "1\n" }) else { return }
            _ = try? dunstctl(["action", "0"])
        }
        #expect(clicked.status == 0, "\(clicked.stderr)")
        #expect(clicked.stdout == "{\"id\":1,\"portalID\":\"libnotify-flatpak.org.example.Notes-chime-1\",\"action\":\"default\"}\n")

        // Outside any sandbox, with NOTIFY_FORCE_PORTAL set: the same way, the id without an app.
        _ = try dunstctl(["close-all"])
        let forced = try runChime(["notify", "--json", "Forced"], environment: bus.environment(extra: ["NOTIFY_FORCE_PORTAL": "1"]))
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout == "{\"id\":1,\"portalID\":\"libnotify-flatpak.(null)-chime-1\"}\n")
        #expect(waitUntil(30) { (try? dunstctl(["count", "displayed"]))?.stdout == "1\n" })
    }
}
