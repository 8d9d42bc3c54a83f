import DBus
import Foundation
@testable import Notifications
import Testing
import TestSupport

/// `chime notify` and chime started as notify-send inside a sandbox: through
/// `org.freedesktop.portal.Notification`, as libnotify's notify-send does (its tests/test_notify_send.py
/// checks the same things of libnotify; these are our own, against a python3-dbusmock stand-in for the
/// portal that records every call exactly as it came).
@Suite(.serialized) struct PortalTests {
    /// A private bus with the portal stand-in, and a notification server that must stay untouched.
    final class Session {
        let bus: PrivateBus
        let portal: PortalStandIn
        let server: RecordingServer
        let links: URL

        init(version: UInt32 = 1, supportedOptions: [String: [String]] = [:]) throws {
            bus = try PrivateBus()
            portal = try PortalStandIn(bus: bus, version: version, supportedOptions: supportedOptions)
            server = try RecordingServer(address: bus.address)
            links = try NotifySendNameTests.linkDirectory()
        }

        var environment: [String: String] { bus.environment(extra: ["NOTIFY_FORCE_PORTAL": "1"]) }

        func notifySend(_ arguments: [String], environment: [String: String]? = nil,
                        whileRunning: ((Int32) -> Void)? = nil) throws -> CommandResult {
            try runProgram(links.appendingPathComponent("notify-send").path, arguments.map { Array($0.utf8) },
                           environment: environment ?? self.environment, whileRunning: whileRunning)
        }

        /// The one AddNotification call: its id and its notification's entries by key.
        func added(_ count: Int = 1) throws -> [(id: String, fields: [String: Value])] {
            try portal.calls("AddNotification").map { arguments in
                let id = arguments.first?.stringValue ?? ""
                var fields: [String: Value] = [:]
                for entry in arguments.last?.dictionaryEntries ?? [] {
                    if let key = entry.key.stringValue { fields[key] = entry.value.unwrappingVariants }
                }
                return (id, fields)
            }
        }

        func waitForAdd() -> Bool { waitUntil { ((try? portal.calls("AddNotification")) ?? []).count >= 1 } }

        func stop() {
            try? FileManager.default.removeItem(at: links)
            server.stop()
            portal.stop()
            bus.stop()
        }
    }

    static func themed(_ names: [String]) -> Value { .structure([.string("themed"), .variant(.strings(names))]) }

    /// No options: the id libnotify forms (no Flatpak app: "(null)"), title, body and priority, and
    /// nothing for the notification server.
    @Test func plainNotification() throws {
        let session = try Session()
        defer { session.stop() }
        let result = try session.notifySend(["title", "my text"])
        #expect(result.status == 0, "\(result.stderr)")
        let added = try session.added()
        try #require(added.count == 1)
        #expect(added[0].id == "libnotify-flatpak.(null)-notify-send-1")
        #expect(added[0].fields == ["title": .string("title"), "body": .string("my text"), "priority": .string("normal")])
        #expect(try session.portal.calls("RemoveNotification").isEmpty)
        #expect(session.server.calls.isEmpty)
    }

    /// Every option notify-send has: -r names the notification (and withdraws it first), -i is a themed
    /// icon with its symbolic variant, critical is urgent; app name, app icon, category, transient,
    /// hints and the expire time have no field in version 1 of the portal.
    @Test func optionsOfVersionOne() throws {
        let session = try Session()
        defer { session.stop() }
        let result = try session.notifySend([
            "--replace-id", "1234", "--expire-time", "27", "--app-name", "foo.App", "--app-icon", "some-app-icon",
            "--icon", "some-icon", "--category", "some.category", "--transient", "--hint", "string:desktop-entry:notify-send-app",
            "--urgency", "critical", "title", "my text",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let added = try session.added()
        try #require(added.count == 1)
        #expect(added[0].id == "libnotify-flatpak.(null)-notify-send-1234")
        #expect(added[0].fields == [
            "title": .string("title"), "body": .string("my text"), "priority": .string("urgent"),
            "icon": Self.themed(["some-icon", "some-icon-symbolic"]),
        ])
        #expect(try session.portal.methodsCalled() == ["RemoveNotification", "AddNotification"])
        #expect(try session.portal.calls("RemoveNotification").map { $0.first?.stringValue } == ["libnotify-flatpak.(null)-notify-send-1234"])
    }

    /// An image file goes as its bytes (the server cannot read the sandbox's files); so does -I's PNG.
    @Test func imageFileAsBytes() throws {
        let session = try Session()
        defer { session.stop() }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("applet.png").path
        let bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 0, 255]
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        #expect(try session.notifySend(["image-path-only", "-i", path]).status == 0)
        #expect(try session.notifySend(["file-uri", "-i", "file://" + path]).status == 0)
        let added = try session.added()
        try #require(added.count == 2)
        let expected = Value.structure([.string("bytes"), .variant(.array(element: .byte, bytes.map(Value.byte)))])
        #expect(added[0].fields["icon"] == expected)
        #expect(added[1].fields["icon"] == expected)
        #expect(added[0].fields["body"] == .string(""))
    }

    /// Actions as buttons ({action, label}, an unnamed one by its index, a repeated name keeping its
    /// place with the last label); the invoked one is printed and written to --selected-action-fd;
    /// -p and --id-fd give the notification's number.
    @Test(arguments: [
        ([["Foo"], ["Bar", "bar-action"]], "bar-action"),
        ([["Foo"], ["Bar", "bar-action"]], "0"),
        ([["foo"], ["default", "id"], ["baz"]], "2"),
        ([["Foo", "foo-action"], ["FooBar", "foo-action"]], "foo-action"),
    ])
    func invokedAction(_ actions: [[String]], _ invoked: String) throws {
        let session = try Session()
        defer { session.stop() }
        var arguments = ["action!", "Choose it", "--print-id"]
        var expected: [(String, String)] = []
        for action in actions {
            let key = action.count > 1 ? action[1] : String(expected.count)
            arguments.append(action.count > 1 ? "--action=\(key)=\(action[0])" : "--action=\(action[0])")
            if let index = expected.firstIndex(where: { $0.0 == key }) { expected[index].1 = action[0] } else { expected.append((key, action[0])) }
        }
        let script = "exec 3>\"$OUT/action\" 4>\"$OUT/id\"; exec notify-send --selected-action-fd=3 --id-fd=4 \"$@\""
        var environment = session.environment
        environment["PATH"] = session.links.path + ":/usr/bin:/bin"
        environment["OUT"] = session.links.path
        let result = try runProgram("/bin/sh", (["-c", script, "sh"] + arguments).map { Array($0.utf8) }, environment: environment) { _ in
            guard session.waitForAdd() else { return }
            try? session.portal.invoke(id: "libnotify-flatpak.(null)-notify-send-1", action: invoked)
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "1\n\(invoked)\n")
        #expect(try String(contentsOfFile: session.links.appendingPathComponent("action").path, encoding: .utf8) == "\(invoked)\n")
        #expect(try String(contentsOfFile: session.links.appendingPathComponent("id").path, encoding: .utf8) == "1\n")
        let added = try session.added()
        try #require(added.count == 1)
        let buttons = expected.map { Value.vardict([("action", .string($0.0)), ("label", .string($0.1))]) }
        #expect(added[0].fields["buttons"] == .array(element: .dictionary(key: .string, value: .variant), buttons))
        #expect(added[0].fields["default-action"] == nil)
    }

    /// An action the notification never offered: said, and the wait ends (the portal took the
    /// notification down with the click); another notification's action is not ours.
    @Test func unknownActionAndOthersActions() throws {
        let session = try Session()
        defer { session.stop() }
        let result = try session.notifySend(["-A", "foo=Foo", "action!", "Choose it"]) { _ in
            guard session.waitForAdd() else { return }
            try? session.portal.invoke(id: "libnotify-flatpak.(null)-notify-send-2", action: "foo")
            try? session.portal.invoke(id: "libnotify-flatpak.(null)-notify-send-1", action: "bar")
        }
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(result.stderr == "Received unknown action bar\n")
    }

    /// A default action is the click on the notification: `default-action`, with no buttons when it
    /// is the only one; its invocation is printed.
    @Test func defaultAction() throws {
        let session = try Session()
        defer { session.stop() }
        let result = try session.notifySend(["-A", "default=Open", "Clickable"]) { _ in
            guard session.waitForAdd() else { return }
            try? session.portal.invoke(id: "libnotify-flatpak.(null)-notify-send-1", action: "default")
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "default\n")
        let added = try session.added()
        #expect(added.first?.fields["default-action"] == .string("default"))
        #expect(added.first?.fields["buttons"] == nil)
    }

    /// Waiting: the expire time withdraws it (the portal never expires anything) and ends the wait;
    /// Ctrl-C withdraws it and says so (notify-send: 0; chime: 130).
    @Test func expiryAndCtrlC() throws {
        let session = try Session()
        defer { session.stop() }
        let started = Date()
        let expired = try session.notifySend(["-w", "-t", "400", "Expiring"])
        #expect(expired.status == 0, "\(expired.stderr)")
        #expect(Date().timeIntervalSince(started) >= 0.4)
        #expect(try session.portal.calls("RemoveNotification").count == 1)

        let cancelled = try session.notifySend(["-w", "Cancelled"]) { pid in
            guard waitUntil(30, { ((try? session.portal.calls("AddNotification")) ?? []).count >= 2 }) else { return }
            kill(pid, SIGINT)
        }
        #expect(cancelled.status == 0)
        #expect(cancelled.stderr == "Wait cancelled, closing notification\n")
        #expect(try session.portal.calls("RemoveNotification").count == 2)

        let chime = try runChime(["notify", "-w", "--json", "Cancelled"], environment: session.environment) { pid in
            guard waitUntil(30, { ((try? session.portal.calls("AddNotification")) ?? []).count >= 3 }) else { return }
            kill(pid, SIGINT)
        }
        #expect(chime.status == 130)
        #expect(chime.stdout == "{\"id\":1,\"portalID\":\"libnotify-flatpak.(null)-chime-1\",\"interrupted\":true}\n")
    }

    /// Version 2: the markup body (with a plain one beside it), the category where the portal has
    /// it (alarm.ringing, an x- one; not the spec's email.arrived), transient and resident as display
    /// hints, a named sound as the default sound, a sound file's bytes, silence, button purposes.
    @Test func versionTwoFields() throws {
        let session = try Session(version: 2, supportedOptions: ["button-purpose": ["x-chime.snooze"]])
        defer { session.stop() }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sound = directory.appendingPathComponent("ding.oga").path
        _ = FileManager.default.createFile(atPath: sound, contents: Data([79, 103, 103, 83, 0, 1]))
        let runs: [[String]] = [
            ["-c", "alarm.ringing", "-e", "-h", "boolean:resident:true", "-h", "string:sound-name:bell", "Alarm", "It is <b>16:35</b> &amp; time"],
            ["-c", "email.arrived", "-h", "boolean:suppress-sound:true", "Mail", "a < b"],
            ["-h", "string:category:x-chime.alarm", "--sound", sound, "-A", "ok=OK", "-A", "later=Later", "--button-purpose", "ok=call.accept",
             "--button-purpose", "later=x-chime.snooze", "-t", "1", "Buttons"],
        ]
        for arguments in runs {
            let result = try runChime(["notify"] + arguments, environment: session.environment)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let added = try session.added()
        try #require(added.count == 3)
        #expect(added[0].fields["markup-body"] == .string("It is <b>16:35</b> &amp; time"))
        #expect(added[0].fields["body"] == .string("It is 16:35 & time"))
        #expect(added[0].fields["category"] == .string("alarm.ringing"))
        #expect(added[0].fields["display-hint"] == .strings(["transient", "persistent"]))
        #expect(added[0].fields["sound"] == .string("default"))
        #expect(added[1].fields["markup-body"] == nil)
        #expect(added[1].fields["body"] == .string("a < b"))
        #expect(added[1].fields["category"] == nil)
        #expect(added[1].fields["sound"] == .string("silent"))
        #expect(added[2].fields["category"] == .string("x-chime.alarm"))
        #expect(added[2].fields["sound"] == .structure([.string("bytes"), .variant(.array(element: .byte, [79, 103, 103, 83, 0, 1].map(Value.byte)))]))
        let buttons = added[2].fields["buttons"]?.arrayElements?.compactMap { $0.dictionaryEntries } ?? []
        let purposes = buttons.map { entries in entries.first(where: { $0.key.stringValue == "purpose" })?.value.unwrappingVariants.stringValue }
        #expect(purposes == ["call.accept", "x-chime.snooze"])
    }

    /// Version 1 gets none of version 2's keys, whatever the options.
    @Test func versionOneGetsNoVersionTwoKeys() throws {
        let session = try Session(version: 1)
        defer { session.stop() }
        let result = try runChime(["notify", "-c", "alarm.ringing", "-e", "--sound", "bell", "Alarm", "<b>16:35</b>"], environment: session.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let added = try session.added()
        #expect(Set(added.first?.fields.keys.map { $0 } ?? []) == ["title", "body", "priority"])
        #expect(added.first?.fields["body"] == .string("<b>16:35</b>"))
    }

    /// dunstify's -C through the portal withdraws this program's notification of that number; a file
    /// the portal cannot be sent (too large, unreadable) is refused before anything is sent.
    @Test func closeAndRefusals() throws {
        let session = try Session()
        defer { session.stop() }
        let closed = try runChime(["notify", "-C", "3"], environment: session.environment)
        #expect(closed.status == 0, "\(closed.stderr)")
        #expect(try session.portal.calls("RemoveNotification").map { $0.first?.stringValue } == ["libnotify-flatpak.(null)-chime-3"])
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("big.png").path
        _ = FileManager.default.createFile(atPath: big, contents: Data(count: 17 << 20))
        let tooBig = try runChime(["notify", "-i", big, "Big"], environment: session.environment)
        #expect(tooBig.status == 65)
        #expect(tooBig.stderr.hasPrefix("chime: -i \(big): cannot send it through the portal"), "\(tooBig.stderr)")
        let purpose = try runChime(["notify", "--button-purpose", "nothing", "Purpose"], environment: session.environment)
        #expect(purpose.status == 64)
        #expect(purpose.stderr == "chime: --button-purpose nothing: give NAME=PURPOSE, e.g. accept=call.accept\n")
        #expect(try session.portal.calls("AddNotification").isEmpty)
        // A refusal says so and how to go round the portal; as notify-send, its words and status 1.
        let refused = try runChime(["notify", "refuse-me"], environment: session.environment)
        #expect(refused.status == 1)
        #expect(refused.stderr == "chime: the notification portal refused the notification (org.freedesktop.portal.Error.NotAllowed: "
            + "Showing notifications is not allowed); NOTIFY_IGNORE_PORTAL=1 sends it to the notification server directly\n")
        let refusedAsNotifySend = try session.notifySend(["refuse-me"])
        #expect(refusedAsNotifySend.status == 1)
        #expect(refusedAsNotifySend.stderr.hasPrefix("the notification portal refused the notification"))
    }

    /// NOTIFY_IGNORE_PORTAL always goes to the notification server, even with NOTIFY_FORCE_PORTAL
    /// set; no portal on the bus falls back to the server too.
    @Test func ignoredOrAbsentPortal() throws {
        let session = try Session()
        defer { session.stop() }
        var environment = session.environment
        environment["NOTIFY_IGNORE_PORTAL"] = "1"
        #expect(try session.notifySend(["Ignored"], environment: environment).status == 0)
        session.portal.stop()
        #expect(try session.notifySend(["No portal"]).status == 0)
        #expect(session.server.waitForCalls(2).map(\.summary) == ["Ignored", "No portal"])
    }

    /// Inside a Flatpak sandbox (bubblewrap with a /.flatpak-info), without any variable: the portal,
    /// with the application's id in the notification's id.
    @Test func insideAFlatpakSandbox() throws {
        let session = try Session()
        defer { session.stop() }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sandbox = try flatpakSandbox(app: "org.example.Notes", in: directory)
        let result = try runProgram(
            "/usr/bin/bwrap", (sandbox + [chimeBinaryPath(), "notify", "-p", "Inside"]).map { Array($0.utf8) },
            environment: session.bus.environment())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "1\n")
        #expect(try session.added().map(\.id) == ["libnotify-flatpak.org.example.Notes-chime-1"])
        #expect(session.server.calls.isEmpty)
    }
}

extension PortalTests {
    /// Where notify goes through the portal, `chime capabilities`, `server-info` and `status` say so
    /// (and answer for the portal as libnotify does), their JSON within its schema; without the
    /// variable they ask the server as ever.
    @Test func commandsSayThePortalIsUsed() throws {
        let session = try Session(version: 2)
        defer { session.stop() }
        let capabilities = try runChime(["capabilities", "--json"], environment: session.environment)
        #expect(capabilities.stdout == "{\"capabilities\":[\"actions\",\"body\",\"body-images\",\"icon-static\"],\"portal\":{\"version\":2,\"why\":\"NOTIFY_FORCE_PORTAL is set\"}}\n")
        #expect(try JSONOutputTests.problems(capabilities.stdout, schema: "capabilities") == [])
        let text = try runChime(["capabilities"], environment: session.environment)
        #expect(text.stdout.contains("(notifications go through the notification portal (version 2, NOTIFY_FORCE_PORTAL is set): no capabilities"))
        let info = try runChime(["server-info", "--json"], environment: session.environment)
        #expect(info.stdout.hasPrefix("{\"name\":\"Portal Notification\",\"vendor\":\"Freedesktop\",\"version\":\"2\",\"specVersion\":\"1.2\",\"portal\":{"))
        #expect(try JSONOutputTests.problems(info.stdout, schema: "server-info") == [])
        let status = try runChime(["status", "--json"], environment: session.environment)
        #expect(status.stdout.contains("\"portal\":{\"version\":2,\"why\":\"NOTIFY_FORCE_PORTAL is set\"}"), "\(status.stdout)")
        #expect(try JSONOutputTests.problems(status.stdout, schema: "status") == [])
        let statusText = try runChime(["status"], environment: session.environment)
        #expect(statusText.stdout.contains("Portal:         chime notify: notifications go through the notification portal"), "\(statusText.stdout)")
        let direct = try runChime(["server-info", "--json"], environment: session.bus.environment())
        #expect(direct.stdout.contains("\"portal\":null"), "\(direct.stdout)")
        #expect(!direct.stdout.contains("Portal Notification"))
    }
}

/// How the sandbox is recognised, from the files libnotify reads.
@Suite struct SandboxTests {
    @Test func snapCgroup() {
        let uuid = "0b8a8e36-47ab-4e31-8a8e-2a4c1a0c9f11"
        #expect(Sandbox.snap(cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.notes.notes-app-\(uuid).scope\n") == ("notes", "notes-app"))
        #expect(Sandbox.snap(cgroup: "12:pids:/user.slice\n0::/user.slice/snap.notes.daemon.service\n") == ("notes", "daemon"))
        #expect(Sandbox.snap(cgroup: "0::/user.slice/user-1000.slice/session-2.scope\n") == (nil, nil))
    }

    @Test func flatpakInfo() {
        #expect(Sandbox.current().wantsPortal == (ProcessInfo.processInfo.environment["NOTIFY_FORCE_PORTAL"] != nil))
        #expect(Sandbox(flatpakApp: "org.example.App").portalID(programName: "notify-send", number: 3) == "libnotify-flatpak.org.example.App-notify-send-3")
        #expect(Sandbox(forced: true).portalID(programName: "chime", number: 1) == "libnotify-flatpak.(null)-chime-1")
        #expect(Sandbox(snapName: "notes", snapApp: "notes-app").portalID(programName: "chime", number: 1) == "libnotify-snap.notes_notes-app-chime-1")
        #expect(Sandbox(forced: true, ignored: true).wantsPortal == false)
        #expect(Sandbox(snapName: "notes", snapApp: "notes-app").snapDesktopEntry == "notes_notes-app")
        #expect(Sandbox(flatpakApp: "org.example.App").snapDesktopEntry == nil)
        #expect(Sandbox.flatpakApp(info: "[Application]\nname=org.example.App\n\n[Instance]\ninstance-id=1\n") == "org.example.App")
        #expect(Sandbox.flatpakApp(info: "[Application]\nname=org.example.App\n[Runtime]\nname = org.gnome.Sdk\n") == "org.gnome.Sdk")
        #expect(Sandbox.flatpakApp(info: "[Instance]\nname=x\n") == nil)
    }
}
