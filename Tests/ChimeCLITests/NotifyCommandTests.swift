import DBus
import Foundation
import Testing
import TestSupport

/// The built `chime` binary: outputs, waiting, and every error path with its message and exit status.
@Suite struct NotifyCommandTests {
    @Test func printsTheIdAndJSON() throws {
        let session = try RecorderSession()
        defer { session.stop() }
        let bus = session.bus
        let printed = try runChime(["notify", "-p", "One"], environment: bus.environment())
        #expect(printed.status == 0)
        #expect(printed.stdout == "1\n")
        let json = try runChime(["notify", "--json", "Two"], environment: bus.environment())
        #expect(json.stdout == "{\"id\":2}\n")
        let quiet = try runChime(["notify", "Three"], environment: bus.environment())
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty && quiet.status == 0)
        #expect(try runChime(["notify", "-v"], environment: bus.environment()).stdout.hasPrefix("chime "))
    }

    @Test func soundNamesAndFilesBecomeTheirHints() throws {
        let session = try RecorderSession()
        defer { session.stop() }
        let (bus, recorder) = (session.bus, session.recorder)
        #expect(try runChime(["notify", "--sound", "bell", "Named"], environment: bus.environment()).status == 0)
        let file = bus.directory.appendingPathComponent("ding.oga")
        try Data([1, 2, 3]).write(to: file)
        #expect(try runChime(["notify", "--sound", file.path, "File"], environment: bus.environment()).status == 0)
        let missing = try runChime(["notify", "--sound", "/nonexistent/ding.oga", "Missing"], environment: bus.environment())
        #expect(missing.status == 65)
        #expect(missing.stderr == "chime: --sound /nonexistent/ding.oga: no readable sound file there\n")
        let calls = recorder.waitForCalls(2)
        #expect(calls.count == 2)
        #expect(calls.first?.appName == "chime")
        #expect(calls.first?.hints["sound-name"] == .string("bell"))
        #expect(calls.last?.hints["sound-file"] == .string(file.path))
    }

    @Test func waitingEndsWhenTheNotificationCloses() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address, autoResponse: .close(reason: 2))
        defer { recorder.stop() }
        let result = try runChime(["notify", "-w", "--json", "Closes"], environment: bus.environment())
        #expect(result.status == 0)
        #expect(result.stdout == "{\"id\":1,\"closed\":{\"reason\":\"dismissed\",\"code\":2}}\n")
    }

    @Test func anInvokedActionIsPrintedAndTheNotificationClosed() throws {
        let session = try RecorderSession(autoResponse: .invokeFirstAction)
        defer { session.stop() }
        let (bus, recorder) = (session.bus, session.recorder)
        let result = try runChime(["notify", "-A", "snooze=Snooze", "-A", "Dismiss", "Alarm"], environment: bus.environment())
        #expect(result.status == 0)
        #expect(result.stdout == "snooze\n")
        #expect(recorder.closedIDs == [1])
        let json = try runChime(["notify", "--json", "-A", "Only", "Alarm"], environment: bus.environment())
        #expect(json.stdout == "{\"id\":2,\"action\":\"0\"}\n")
    }

    @Test func waitingHasATimeLimit() throws {
        let session = try RecorderSession()
        defer { session.stop() }
        let bus = session.bus
        let started = Date()
        let result = try runChime(["notify", "-w", "--wait-timeout", "1", "--json", "Nobody closes me"], environment: bus.environment())
        #expect(result.status == 3)
        #expect(result.stdout == "{\"id\":1,\"timedOut\":true}\n")
        #expect(result.stderr == "chime: stopped waiting after 1 s without the notification closing\n")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func interruptingTheWaitClosesTheNotification() throws {
        let session = try RecorderSession()
        defer { session.stop() }
        let (bus, recorder) = (session.bus, session.recorder)
        let result = try runChime(["notify", "-w", "Interrupt me"], environment: bus.environment()) { pid in
            _ = recorder.waitForCalls(1)
            usleep(100_000)
            kill(pid, SIGINT)
        }
        #expect(result.status == 130)
        #expect(result.stderr == "chime: wait cancelled, closing notification\n")
        #expect(recorder.closedIDs == [1])
    }

    @Test func actionsAreDroppedWhereTheServerHasNone() throws {
        let session = try RecorderSession(capabilities: ["body"])
        defer { session.stop() }
        let (bus, recorder) = (session.bus, session.recorder)
        let result = try runChime(["notify", "-A", "yes=Yes", "No buttons"], environment: bus.environment())
        #expect(result.status == 5)
        #expect(result.stderr == "chime: the notification server does not support actions; showing the notification without them\n")
        #expect(recorder.waitForCalls(1).first?.actions == [])
    }

    @Test func noSessionBus() throws {
        let result = try runChime(["notify", "Hello"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/chime-bus", "PATH": "/usr/bin:/bin"])
        #expect(result.status == 68)
        #expect(result.stderr.hasPrefix("chime: cannot connect to the session bus: "))
        #expect(result.stderr.hasSuffix("; run chime inside your desktop session or set DBUS_SESSION_BUS_ADDRESS\n"))
        #expect(result.stderr.split(separator: "\n").count == 1)

        // No variable and no socket where the session bus would be.
        let runtime = try makeTemporaryDirectory("chime-runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let unset = try runChime(["capabilities"], environment: ["XDG_RUNTIME_DIR": runtime.path, "PATH": "/usr/bin:/bin"])
        if !FileManager.default.fileExists(atPath: "/run/user/\(getuid())/bus") {
            #expect(unset.status == 68)
            #expect(unset.stderr.contains("DBUS_SESSION_BUS_ADDRESS is not set and there is no session bus socket at \(runtime.path)/bus"))
        }
    }

    @Test func noNotificationServer() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        for arguments in [["notify", "Hello"], ["capabilities"], ["server-info", "--json"]] {
            let result = try runChime(arguments, environment: bus.environment())
            #expect(result.status == 69)
            #expect(result.stderr == "chime: no notification server is running on the session bus (org.freedesktop.Notifications has no owner); start one, e.g. dunst\n")
        }
    }

    @Test func invalidInputIsRefusedBeforeLibdbusSeesIt() throws {
        let session = try RecorderSession()
        defer { session.stop() }
        let (bus, recorder) = (session.bus, session.recorder)
        let bad = try runProgram(chimeBinaryPath(), [Array("notify".utf8), [0x53, 0xFF, 0xFE]], environment: bus.environment())
        #expect(bad.status == 65)
        #expect(bad.stderr == "chime: argument 2 is not valid UTF-8 (S\\xff\\xfe); D-Bus can only carry UTF-8 text\n")
        let badEscape = try runChime(["notify", "Title", #"\377"#], environment: bus.environment())
        #expect(badEscape.status == 65)
        #expect(badEscape.stderr == "chime: invalid UTF-8 in the body after expanding its escapes\n")
        #expect(recorder.calls.isEmpty)
    }

    @Test(arguments: [
        (["notify", "-h", "int:x", "S"], 64, "chime: invalid hint \"int:x\": use TYPE:NAME:VALUE\n"),
        (["notify", "-h", "int:x:-5", "S"], 64, "chime: value \"-5\" of hint \"x\" could not be parsed as type \"int\"\n"),
        (["notify", "-h", "float:x:1", "S"], 64, "chime: invalid hint type \"float\": use one of boolean, int, double, string, byte, variant\n"),
        (["notify", "-u", "loud", "S"], 64, "chime: The value 'loud' is invalid for '-u <LEVEL>'. Please provide one of 'low', 'normal' or 'critical'. (see 'chime notify --help')\n"),
        (["notify"], 64, "chime: No summary specified. (see 'chime notify --help')\n"),
        (["notify", "a", "b", "c"], 64, "chime: Unexpected argument 'c' (see 'chime notify --help')\n"),
        (["notify", "-t", "soon", "S"], 64, "chime: The value 'soon' is invalid for '-t <TIME>' (see 'chime notify --help')\n"),
        (["notify", "--wait-timeout", "-3", "S"], 64, "chime: --wait-timeout must be 0 or more seconds (see 'chime notify --help')\n"),
        (["frobnicate"], 64, "chime: Unexpected argument 'frobnicate' (see 'chime --help')\n"),
    ])
    func usageErrorsAreOneLine(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let result = try runChime(arguments, environment: bus.environment())
        #expect(result.status == status)
        #expect(result.stderr == message)
    }
}
