// chime-alarms: chime's alarms and timers in a GNOME app, a client of the daemon's D-Bus
// interface (org.chime.Scheduler1) and of nothing else.
import ChimeCenter
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
let firstListing = Background { () -> Result<[PendingSummary], any Error> in
    Result { try UserNotificationCenter(connection: Connection(.session), timeout: .seconds(5)).pendingSummaries() }
}
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
// GApplication reads its own options; the ones handled above are not passed on.
exit(app.run([arguments[0]]))
