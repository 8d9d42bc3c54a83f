import DBus
import Foundation
import Testing
import TestSupport

/// The code people write for Apple's UserNotifications, compiled unchanged (Examples/Corpus and the
/// four examples, built by `swift build --package-path Examples`), each program run against the
/// daemon on a private bus with our recording notification server: what it prints, what the daemon
/// then holds under its name, and what reached the screen. A program that exits right after a call
/// without a completion handler has its request with the daemon all the same.
///
/// make test builds the Examples package first (scripts/test-examples.sh) and runs this suite
/// after it, in chime's own build folder; `CHIME_EXAMPLES_BIN` names the folder of the programs
/// (default: `.build/debug`, where `scripts/test-examples.sh --build-only` builds them).
@Suite(.serialized) struct CorpusTests {
    struct Program: Sendable {
        var name: String
        var arguments: [String] = []
        /// Lines it must print (each exactly, in any order).
        var prints: [String] = []
        /// Its requests the daemon must hold afterwards (their identifiers, without the program's name).
        var pending: Set<String> = []
        /// Popups (title, body) the notification server must have been asked to show for it.
        var shown: [(String, String)] = []
        /// A button the user presses on its popup with this title, while it runs.
        var press: (title: String, key: String)?
        /// Ids of `pending` that are random (UUIDs): only their count is compared.
        var randomIdentifiers = 0
    }

    static let programs: [Program] = [
        // The four examples.
        Program(name: "egg-timer", arguments: ["2"], shown: [("Wait!", "Your eggs are almost done!")]),
        Program(name: "weekday-alarm", pending: ["homeroom/2", "homeroom/3", "homeroom/4", "homeroom/5", "homeroom/6"]),
        Program(name: "weekly-reminders", arguments: ["habit"],
                pending: Set(["Sunday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"].map { "habit/\($0)" })),
        Program(name: "check-authorization", prints: ["scheduled: every hour"], pending: ["stretch"]),
        // Top-level scripts.
        Program(name: "top-level-await", prints: ["scheduled"], pending: ["hydrate"]),
        Program(name: "top-level-exit", shown: [("Backup finished", "All 1,204 files were copied.")]),
        Program(name: "top-level-dispatch-main", prints: ["Break reminder set for 25 minutes from now"], pending: ["pomodoro.break"]),
        Program(name: "top-level-semaphore", prints: ["notified"], shown: [("Build finished", "<b>chime</b>\n0 errors, 0 warnings")]),
        Program(name: "top-level-run-loop", prints: ["added"], pending: ["stand-up"]),
        // Classes and functions as apps hold them.
        Program(name: "notification-manager", prints: ["granted: true"], pending: ["laundry"], shown: [("Tea", "Your tea is ready")]),
        Program(name: "reminder-store", prints: ["authorized: true", "journal,vitamins"], pending: ["journal", "vitamins"]),
        Program(name: "daily-reminder", prints: ["next: 3"], pending: [], randomIdentifiers: 1),
        Program(name: "weekday-reminders", prints: ["pending: 3"], pending: ["workout-2", "workout-4", "workout-6"]),
        Program(name: "date-from-picker", prints: ["dentist in 1 day(s) at 10:30"], pending: ["dentist"]),
        Program(name: "cancel-by-identifier", prints: ["evening-pill morning-pill"], pending: ["evening-pill", "morning-pill"]),
        Program(name: "refresh-all", prints: ["rebuilt"], pending: ["task-3", "task-5"]),
        Program(name: "pending-async", prints: ["sprints: Sprint alpha, Sprint beta, Sprint gamma", "shortest interval: 600"],
                pending: ["sprint.alpha", "sprint.beta", "sprint.gamma", "other"]),
        Program(name: "delivered-cleanup", prints: ["delivered: msg-Alice msg-Bob", "left: 0"],
                shown: [("New message", "From Alice"), ("New message", "From Bob")]),
        // Authorization and settings.
        Program(name: "ask-permission", prints: ["allowed"]),
        Program(name: "ask-permission-async", prints: ["granted=true", "alerts=true badges=unsupported"]),
        Program(name: "settings-switch", prints: ["status: authorized", "alerts on, style alert"]),
        // Categories, actions and the delegate.
        Program(name: "meeting-invite", prints: ["invited", "categories: [\"MEETING_INVITATION\"]"],
                shown: [("Weekly Staff Meeting", "Every Tuesday at 2pm")]),
        Program(name: "app-delegate", prints: ["will present wake", "snoozed wake"], shown: [("Wake up", "07:00")],
                press: ("Wake up", "SNOOZE")),
        Program(name: "async-delegate", prints: ["waiting", "action: APPROVE"], shown: [("Pull request", "Fix the flaky test")],
                press: ("Pull request", "APPROVE")),
        Program(name: "quick-reply", prints: ["pressed: REPLY"], shown: [("Sam", "Lunch today?")], press: ("Sam", "REPLY")),
        Program(name: "protocol-for-tests", prints: ["pending: 1"], pending: ["check-in"]),
        // Errors, attachments, sounds, threads, badges, user info.
        Program(name: "error-handling", prints: ["new-year: scheduled", "untitled: no content (1401)", "past: UNErrorDomain 1400"],
                pending: ["new-year"]),
        Program(name: "image-attachment", prints: ["attached cover (public.png)", "refused: unrecognized type"],
                shown: [("New episode", "Episode 12 is out")]),
        Program(name: "critical-sounds", prints: ["pending 5, critical 3"],
                pending: ["default", "named", "critical", "critical-quiet", "critical-named"]),
        Program(name: "grouped-threads", prints: ["sent 3"],
                shown: [("Family", "Dinner at 7"), ("Family", "Bring bread"), ("Work", "Server is down")]),
        Program(name: "badge-count", prints: ["badge cleared"], pending: ["unread"]),
        Program(name: "user-info", prints: ["order A-1043, items 3"], pending: ["order-A-1043"]),
        Program(name: "main-struct", arguments: ["2"], prints: ["counting down 2 s"], shown: [("Countdown", "2 seconds are up")]),
        Program(name: "task-group", prints: ["planned 7"], pending: Set((1...7).map { "plan-\($0)" })),
        // Code as its authors wrote it: a file that imports UserNotifications alone, an app that
        // subclasses (and a text field made with an initializer the subclass inherits), async calls
        // whose answer is not looked at.
        Program(name: "only-usernotifications", prints: ["scheduled in under a day and a half: true", "id is a UUID: true"],
                pending: ["plants"]),
        Program(name: "reply-subclass", prints: ["actions: REPLY QUICK, button titles empty: true", "title: Ana (2 new)", "added"],
                pending: ["chat-ana"]),
        Program(name: "ignored-answers", prints: ["asked and scheduled"], pending: ["stretch"]),
    ]

    static var programsFolder: URL {
        if let folder = ProcessInfo.processInfo.environment["CHIME_EXAMPLES_BIN"] { return URL(fileURLWithPath: folder) }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug")
    }

    @Test func everyProgramDoesWhatItsCodeAsks() throws {
        let folder = Self.programsFolder
        let missing = Self.programs.filter { !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent($0.name).path) }
        try #require(missing.isEmpty, "not built: \(missing.map(\.name)) in \(folder.path) (scripts/test-examples.sh --build-only)")
        #expect(Self.programs.count >= 32)
        #expect(Set(Self.programs.map(\.name)).count == Self.programs.count)

        let bus = try PrivateBus()
        let server = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path)
        defer { daemon.stop(); server.stop(); bus.stop() }
        // Each program's working directory holds a picture (image-attachment's cover.png) and its home.
        let work = try makeTemporaryDirectory("chime-corpus")
        defer { try? FileManager.default.removeItem(at: work) }
        try Self.png.write(to: work.appendingPathComponent("cover.png"))
        var environment = bus.environment(extra: ["HOME": work.path, "XDG_DATA_HOME": work.appendingPathComponent("data").path])
        environment.removeValue(forKey: "CHIME_APPLICATION_ID")

        for program in Self.programs {
            // env -C: started in the working directory.
            let command = ["-C", work.path, folder.appendingPathComponent(program.name).path] + program.arguments
            let result = try runProgram("/usr/bin/env", command.map { Array($0.utf8) }, environment: environment, timeout: 90) { _ in
                guard let press = program.press else { return }
                // The user presses the button once the popup is on screen.
                guard let call = waitForValue(30, { server.calls.first { $0.summary == press.title } }) else { return }
                try? server.invokeAction(id: call.assignedID, key: press.key)
            }
            let lines = Set(result.stdout.split(separator: "\n").map(String.init))
            let says = "\(program.name) (exit \(result.status)) printed:\n\(result.stdout)\nand on standard error:\n\(result.stderr)"
            #expect(result.status == 0, "\(says)")
            for line in program.prints { #expect(lines.contains(line), "\(says)") }
        }

        // What reached the screen (timers of a second or two are waited for).
        for program in Self.programs {
            for (title, body) in program.shown {
                let call = waitForValue(30) { server.calls.first { $0.summary == title && $0.body == body } }
                #expect(call != nil, "\(program.name): no popup \"\(title)\" / \"\(body)\"; the server saw \(server.calls.map { ($0.summary, $0.body) })")
            }
        }
        // What the daemon holds, under each program's name.
        let list = try runChime(["list", "--json"], environment: bus.environment())
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list)")
        let identifiers = items.compactMap { $0["id"] as? String }
        for program in Self.programs {
            let mine = identifiers.filter { $0.hasPrefix(program.name + "/") }.map { String($0.dropFirst(program.name.count + 1)) }
            if program.randomIdentifiers > 0 {
                #expect(mine.count == program.pending.count + program.randomIdentifiers, "\(program.name): \(mine)")
                #expect(program.pending.isSubset(of: Set(mine)), "\(program.name): \(mine)")
            } else {
                #expect(Set(mine) == program.pending, "\(program.name): pending \(mine.sorted()), not \(program.pending.sorted())")
            }
        }
    }

    /// Without a daemon, a call without a handler has no one to tell but standard error: one line says
    /// what failed and how to start the daemon, and the program goes on.
    @Test func withoutADaemonACallWithoutHandlerSaysSoOnStandardError() throws {
        let program = Self.programsFolder.appendingPathComponent("top-level-exit").path
        try #require(FileManager.default.isExecutableFile(atPath: program), "not built: \(program) (scripts/test-examples.sh --build-only)")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let result = try runProgram(program, [], environment: bus.environment(), timeout: 60)
        #expect(result.status == 0, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("UserNotifications: adding the request \"") == true, "\(result.stderr)")
        #expect(result.stderr.contains("failed: the chime daemon is not running"), "\(result.stderr)")
    }

    /// A 1×1 PNG.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")!
}
