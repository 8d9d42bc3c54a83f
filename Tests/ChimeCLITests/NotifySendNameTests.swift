import DBus
import Foundation
import Notifications
import Testing
import TestSupport

/// chime started under the name `notify-send` is notify-send: its app name, help, messages and
/// exit statuses, compared with Debian's notify-send where that one has the feature, and with
/// libnotify 0.8.7's own tests (tests/test_notify_send.py) where only the newer one has it.
@Suite struct NotifySendNameTests {
    /// A directory holding a `notify-send` link to the chime under test.
    static func linkDirectory() throws -> URL {
        let directory = try makeTemporaryDirectory("chime-as-notify-send")
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("notify-send").path, withDestinationPath: chimeBinaryPath())
        return directory
    }

    static func runAsNotifySend(_ arguments: [String], environment: [String: String], timeout: TimeInterval = 30,
                                whileRunning: ((Int32) -> Void)? = nil) throws -> CommandResult {
        let directory = try linkDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        return try runProgram(directory.appendingPathComponent("notify-send").path, arguments.map { Array($0.utf8) },
                              environment: environment, timeout: timeout, whileRunning: whileRunning)
    }

    /// Every refusal: the same words on stderr and the same status (1) as notify-send, nothing sent.
    @Test(arguments: [
        ["--bogus", "x"], ["-t"], ["-t", "x", "y"], ["-u", "bad", "y"], ["a", "b", "c"], [], ["-h", "int:x", "S"],
        ["-h", "int:x:-5", "S"], ["-h", "byte:x:256", "S"], ["--expire-time=", "S"], ["--replace-id", "x", "S"],
        // Issue 25: every other refusal of notify-send.c's hint readers.
        ["-h", "byte:b:-1", "S"], ["-h", "variant:v:", "S"], ["-h", "double:d:.5", "S"], ["-h", "float:f:1", "S"],
        ["-h", "int:n", "S"], ["-h", "boolean", "S"], ["-h", "variant:v:[1, 'a']", "S"],
    ])
    func sameRefusal(_ arguments: [String]) throws {
        let (reference, ours, calls) = try besideNotifySend(arguments, calls: 0) { try Self.runAsNotifySend(arguments, environment: $0) }
        #expect(reference.status == 1)
        #expect(ours.status == 1, "\(arguments): \(ours.stderr)")
        #expect(ours.stderr == reference.stderr, "\(arguments)")
        #expect(ours.stdout == reference.stdout)
        #expect(calls.isEmpty)
    }

    /// The same Notify call as notify-send, app name included.
    @Test(arguments: [["Summary", "Body"], ["-u", "critical", "-t", "0", "-c", "x", "Critical"], ["-a", "given", "App"]])
    func sameCallAndAppName(_ arguments: [String]) throws {
        let (reference, ours, calls) = try besideNotifySend(arguments, calls: 2) { try Self.runAsNotifySend(arguments, environment: $0) }
        #expect(reference.status == 0 && ours.status == 0, "\(ours.stderr)")
        try #require(calls.count == 2)
        #expect(calls[0].appName == calls[1].appName)
        #expect(Array(calls[0].arguments.dropLast(2)) == Array(calls[1].arguments.dropLast(2)))
        #expect(calls[0].expireTimeout == calls[1].expireTimeout)
    }

    /// notify-send's help, with 0.8.7's options added; the version says which notify-send it is.
    @Test(arguments: [["PATH": "/usr/bin:/bin"], ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]])
    func helpAndVersion(_ environment: [String: String]) throws {
        // Both started by the same name, which GLib shows in the usage line.
        let links = try Self.linkDirectory()
        defer { try? FileManager.default.removeItem(at: links) }
        let reference = try runProgram("/usr/bin/notify-send", [Array("--help".utf8)], environment: environment)
        let ours = try runProgram(links.appendingPathComponent("notify-send").path, [Array("--help".utf8)], environment: environment)
        #expect(ours.status == 0)
        // Every line of Debian's help is in ours, but the app name's, whose typo libnotify fixed.
        let theirs = reference.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let mine = Set(ours.stdout.replacingOccurrences(of: links.appendingPathComponent("notify-send").path, with: "/usr/bin/notify-send")
            .split(separator: "\n", omittingEmptySubsequences: false))
        for line in theirs where !line.contains("--app-name") {
            #expect(mine.contains(line), "missing from our help: \(line)")
        }
        for option in ["-n, --app-icon=ICON", "--id-fd=FD", "--selected-action-fd=FD", "--activation-token-fd=FD"] {
            #expect(ours.stdout.contains(option))
        }
        let short = try runProgram(links.appendingPathComponent("notify-send").path, [Array("-?".utf8)], environment: environment)
        #expect(short.stdout == ours.stdout)
        let version = try Self.runAsNotifySend(["--version"], environment: environment)
        #expect(version.status == 0)
        #expect(version.stdout.hasSuffix("notify-send 0.8.7 (chime \(try chimeVersionText()))\n"), "\(version.stdout)")
    }

    func chimeVersionText() throws -> String {
        let result = try runChime(["--version"], environment: ["PATH": "/usr/bin:/bin"])
        return String(result.stdout.dropFirst("chime ".count).dropLast())
    }

    /// A server without actions: notify-send's message, shown without them, status 1.
    @Test func actionsNotSupported() throws {
        let arguments = ["-A", "Foo", "-A", "bar=Bar", "Action!", "Choose it"]
        let (reference, ours, calls) = try besideNotifySend(arguments, capabilities: ["body"], calls: 2) {
            try Self.runAsNotifySend(arguments, environment: $0)
        }
        #expect(reference.status == 1 && ours.status == 1)
        #expect(ours.stderr == reference.stderr)
        try #require(calls.count == 2)
        #expect(calls[0].actions == [] && calls[1].actions == [])
    }

    /// --id-fd, --selected-action-fd and --activation-token-fd write to the descriptors a script
    /// opened, as libnotify 0.8.7's test does; the action is also printed.
    @Test func descriptorsGetTheIdTheActionAndTheToken() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let links = try Self.linkDirectory()
        defer { try? FileManager.default.removeItem(at: links) }
        let script = """
            exec 3>"$OUT/id" 4>"$OUT/action" 5>"$OUT/token"
            exec notify-send --id-fd=3 --selected-action-fd 4 --activation-token-fd=5 -A Foo -A bar-action=Bar "Action!" "Choose it"
            """
        var environment = bus.environment()
        environment["PATH"] = links.path + ":/usr/bin:/bin"
        environment["OUT"] = links.path
        let result = try runProgram("/bin/sh", [Array("-c".utf8), Array(script.utf8)], environment: environment) { _ in
            let calls = recorder.waitForCalls(1)
            guard calls.count == 1 else { return }
            // The id is in its descriptor before any answer comes.
            _ = waitUntil { !((try? String(contentsOfFile: links.appendingPathComponent("id").path, encoding: .utf8))?.isEmpty ?? true) }
            try? recorder.emitActivationToken(id: 1, token: "activation-token")
            try? recorder.invokeAction(id: 1, key: "bar-action")
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "bar-action\n")
        let read = { (name: String) in try String(contentsOfFile: links.appendingPathComponent(name).path, encoding: .utf8) }
        #expect(try read("id") == "1\n")
        #expect(try read("action") == "bar-action\n")
        #expect(try read("token") == "activation-token\n")
    }

    /// A repeated action name keeps its place and takes the later label, and an unnamed action is
    /// named by its index among the -A arguments, as libnotify master's tests expect
    /// (test_activate_replaced_action, test_activate_third_unnamed_action).
    @Test(arguments: [
        (["-A", "foo-action=Foo", "-A", "foo-action=FooBar"], ["foo-action", "FooBar"], "foo-action"),
        (["-A", "foo", "-A", "id=default", "-A", "baz"], ["0", "foo", "id", "default", "2", "baz"], "2"),
    ])
    func actionsAsLibnotifyKeepsThem(_ options: [String], _ expected: [String], _ invoked: String) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let result = try Self.runAsNotifySend(options + ["action!", "Choose it"], environment: bus.environment()) { _ in
            guard recorder.waitForCalls(1).count == 1 else { return }
            try? recorder.invokeAction(id: 1, key: invoked)
        }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == invoked + "\n")
        #expect(recorder.calls.first?.arguments[5] == .strings(expected))
    }

    /// An action the notification never offered is reported and the wait goes on; Ctrl-C then
    /// closes the notification, says so, and exits 0, as notify-send does.
    @Test func unknownActionThenCtrlC() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let result = try Self.runAsNotifySend(["-A", "foo=Foo", "Action!", "Choose it"], environment: bus.environment()) { pid in
            guard recorder.waitForCalls(1).count == 1 else { return }
            usleep(200_000)
            try? recorder.invokeAction(id: 1, key: "bar")
            usleep(300_000)
            kill(pid, SIGINT)
        }
        #expect(result.status == 0)
        #expect(result.stdout == "")
        #expect(result.stderr == "Received unknown action bar\nWait cancelled, closing notification\n")
    }
}

/// dunstify's options in `chime notify`: --close, --stack-tag and --raw-icon.
@Suite struct DunstifyOptionTests {
    @Test func closeStackTagAndRawIcon() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A 2×1 RGB PNG, written by pypng.
        let png = directory.appendingPathComponent("icon.png").path
        let writer = try runProgram("/usr/bin/python3", ["-c", "import png,sys; png.Writer(2, 1, greyscale=False).write(open(sys.argv[1], 'wb'), [[255, 0, 0, 0, 0, 255]])", png].map { Array($0.utf8) },
                                    environment: ["PATH": "/usr/bin:/bin"])
        try #require(writer.status == 0, "\(writer.stderr)")

        let shown = try runChime(["notify", "-p", "--stack-tag", "volume", "-I", png, "Volume", "50%"], environment: bus.environment())
        #expect(shown.status == 0, "\(shown.stderr)")
        let call = try #require(recorder.waitForCalls(1).first)
        #expect(call.hints["x-dunst-stack-tag"] == .string("volume"))
        #expect(call.hints["x-canonical-private-synchronous"] == .string("volume"))
        let image = try #require(call.hints["image-data"])
        #expect(image == (try ImageData(pngFile: png)).value)

        // -C closes it, without a summary.
        let close = try runChime(["notify", "-C", shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines)], environment: bus.environment())
        #expect(close.status == 0, "\(close.stderr)")
        #expect(recorder.closedIDs == [1])
    }
}
