// chime-alarms: chime's alarms and timers in a GNOME app, a client of the daemon's D-Bus
// interface (org.chime.Scheduler1) and of nothing else.
import ChimeCenter
import ChimeClient
import DBus
import Notifications
import Gtk
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
if arguments.contains("--version") {
    print("chime-alarms \(chimeVersion)")
    exit(0)
}
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
        Usage: chime-alarms

        chime's alarms and timers in a window: set weekday alarms with a sound, start timers,
        snooze or stop a ringing alarm, and see what this desktop can do. The chime daemon keeps
        the alarms (it is started when it is not running), so they ring with the window closed.
        """)
    exit(0)
}

let tracing = Sys.environment("CHIME_TRACE") != nil
if tracing { trace("main at \(monotonicMicroseconds())") }
// The alarms are listed on a thread of their own (its own connection) while GTK and libadwaita
// start: with 100,000 alarms the listing takes as long as they do.
let firstListing = Background { FirstListing.make() }
Localization.setUp()
let app = Application(id: "org.chime.Alarms")
var main: MainWindow?
app.onActivate {
    // The app's own icons (the timers page's): CHIME_ICONDIR (the source tree's, for tests),
    // and share/icons beside the binary's bin, found even where that prefix is not in XDG_DATA_DIRS.
    if let directory = Sys.environment("CHIME_ICONDIR"), !directory.isEmpty { addIconDirectory(directory) }
    addIconDirectory(Localization.directory().replacing("/share/locale", with: "/share/icons"))
    if let main {
        main.present()
        return
    }
    // On a phone (Phosh), every button is a finger's target: 44 px at least each way (libadwaita's
    // are 34 px tall, for a pointer). CHIME_ALARMS_TOUCH=1 asks for it anywhere.
    if Touch.wanted { addStyle(Touch.css) }
    if tracing { trace("activate at \(monotonicMicroseconds())") }
    var link: SchedulerLink?
    var problem: String?
    do { link = try SchedulerLink() } catch { problem = describe(error) }
    let window = MainWindow(app: app, link: link, linkError: problem, firstListing: firstListing)
    main = window
    if tracing { trace("window built at \(monotonicMicroseconds())") }
    window.present()
    if tracing { trace("presented at \(monotonicMicroseconds())") }
}
app.addAction("quit", shortcuts: ["<Control>q"]) { app.quit() }

/// The first listing, made on a thread of its own while GTK starts, and whether the alarms changed
/// since: it follows PendingChanged on its own connection from before it lists until the window
/// follows it itself and asks (`changedMeanwhile`). A change in that gap (the alarm file read just
/// as the app starts) would otherwise never reach the list.
final class FirstListing: @unchecked Sendable {
    // Written by the listing's thread before it ends, read by the main thread after the join.
    private(set) var result: Result<[PendingSummary], any Error>
    private var connection: Connection?
    private var token: SubscriptionToken?
    private var changed = false

    private init(_ result: Result<[PendingSummary], any Error>) { self.result = result }

    static func make() -> FirstListing {
        let listing = FirstListing(.success([]))
        do {
            let connection = try Connection(.session)
            let center = UserNotificationCenter(connection: connection, timeout: .seconds(5))
            listing.connection = connection
            listing.token = try center.follow(.pendingChanged) { [unowned listing] _ in listing.changed = true }
            listing.result = Result { try center.pendingSummaries() }
        } catch {
            listing.result = .failure(error)
        }
        return listing
    }

    /// Whether a PendingChanged came since before the listing (what waits on its connection is
    /// read now); it follows no more after this.
    func changedMeanwhile() -> Bool {
        if let connection {
            _ = connection.processAvailable()
            connection.dispatchPending()
        }
        token = nil
        connection = nil
        return changed
    }
}

/// The touch style: where, and what.
enum Touch {
    static let wanted: Bool = {
        if let asked = Sys.environment("CHIME_ALARMS_TOUCH") { return asked == "1" }
        return (Sys.environment("XDG_CURRENT_DESKTOP") ?? "").split(separator: ":").contains { $0.lowercased() == "phosh" }
    }()
    static let css = """
        button { min-height: 44px; min-width: 44px; }
        spinbutton > button { min-height: 44px; min-width: 44px; }
        row { min-height: 50px; }
        switch { min-height: 44px; border-radius: 22px; }
        switch > slider { min-height: 40px; min-width: 40px; border-radius: 20px; }
        headerbar { padding-left: 0; padding-right: 0; }
        headerbar windowcontrols { margin: 0; }
        headerbar button, headerbar windowcontrols > button { margin: 0; padding-left: 0; padding-right: 0; }
        """
}
// GApplication reads its own options; the ones handled above are not passed on.
exit(app.run([arguments[0]]))
