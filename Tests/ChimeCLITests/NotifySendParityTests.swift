import DBus
import Foundation
import Testing
import TestSupport

/// The same arguments through notify-send (libnotify 0.8.1) and `chime notify` must put the same
/// Notify call on the wire, as our recording server sees it.
@Suite struct NotifySendParityTests {
    static let cases: [[String]] = [
        ["Summary"],
        ["Summary", "Body text"],
        ["Escapes", #"line one\nline two\ttabbed \\ backslash \"quoted\""#],
        ["Ümlauts ✓ 🔔", "<b>markup</b> & more"],
        ["-u", "low", "Low"],
        ["-u", "CRITICAL", "Critical"],
        ["--urgency=normal", "Normal"],
        ["-t", "5000", "Timed"],
        ["-t", "0", "Never"],
        ["-t", "-1", "Server default"],
        ["-et", "500", "Cluster"],
        ["--expire-time=250", "Long form"],
        ["-a", "my-app", "App"],
        ["--app-name", "", "Empty app"],
        ["-i", "dialog-information", "Icon"],
        ["-i", "/usr/share/icons/x.png", "Icon path"],
        ["-c", "email.arrived,im.received", "Categories"],
        ["-c", "", "Empty category"],
        ["-e", "Transient"],
        ["-h", "int:x-pos:5", "-h", "double:d:2.5", "-h", "byte:b:9", "-h", "boolean:flag:true", "-h", "string:s:hello", "Hints"],
        ["-h", "INT:wrap:4294967297", "-h", "boolean:b2:7", "-h", "boolean:b3:nope", "-h", "double:d2:1e3", "More hints"],
        ["-h", "variant:v:('a', <1>)", "Variant tuple"],
        ["-h", "variant:v:{'k': <uint32 5>}", "Variant dict"],
        ["-h", "variant:v:@as ['x', 'y']", "Variant array"],
        ["-h", "string:category:from-hint", "-c", "from-option", "Hint beats option"],
        ["-h", "byte:urgency:0", "-u", "critical", "Hint beats urgency"],
        ["-r", "12", "Replace"],
        ["-e", "-u", "low", "-t", "1200", "-i", "alarm", "-c", "x", "--", "-dash summary", "-dash body"],
        // Differences a comparison of 60 command lines found (issue 14):
        ["-r", "-1", "Replace minus one"],
        ["-t", "-5", "Minus five"],
        ["-h", "variant:x:<int32 5>", "Variant in a variant"],
        ["-h", "string:x-tag:", "Empty string hint"],
        ["--transient=true", "Transient true"],
        ["--transient=false", "A flag given any value is set"],
        ["-h", "string:category:", "-c", "kept", "An empty string hint sets nothing"],
        ["-h", "string:x-tag:first", "-h", "string:x-tag:", "An empty string hint leaves an earlier one"],
        ["-r", "2147483647", "Largest replace id"],
    ]

    /// Where notify-send refuses, chime refuses with the same words (and its own usage status).
    @Test(arguments: [[""], ["", "Body"], ["--expire-time=", "Summary"], ["--replace-id=", "Summary"]])
    func sameRefusal(_ arguments: [String]) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let reference = try runProgram("/usr/bin/notify-send", arguments.map { Array($0.utf8) }, environment: bus.environment())
        let ours = try runChime(["notify"] + arguments, environment: bus.environment())
        #expect(reference.status == 1)
        #expect(ours.status == 64)
        #expect(ours.stderr == "chime: " + reference.stderr, "\(arguments)")
        #expect(recorder.calls.isEmpty)
    }

    @Test func helpAllIsHelp() throws {
        let reference = try runProgram("/usr/bin/notify-send", [Array("--help-all".utf8)], environment: ["PATH": "/usr/bin:/bin"])
        let ours = try runChime(["notify", "--help-all"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(reference.status == 0 && ours.status == 0)
        #expect(ours.stdout.contains("--expire-time") && ours.stdout.contains("--transient"))
    }

    @Test(arguments: cases)
    func sameCallOnTheWire(_ arguments: [String]) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop() }
        let reference = try runProgram("/usr/bin/notify-send", arguments.map { Array($0.utf8) }, environment: bus.environment())
        try #require(reference.status == 0, "notify-send failed: \(reference.stderr)")
        let ours = try runChime(["notify"] + arguments, environment: bus.environment())
        #expect(ours.status == 0, "\(ours.stderr)")
        let calls = recorder.waitForCalls(2)
        try #require(calls.count == 2)
        expectSameCall(calls[0], calls[1], appNameMatters: arguments.contains { $0.hasPrefix("-a") || $0.hasPrefix("--app-name") })
    }

    @Test func printIDAndActionsBehaveTheSame() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        // The server invokes the first action at once, so both programs return.
        let recorder = try RecordingServer(address: bus.address, autoResponse: .invokeFirstAction)
        defer { recorder.stop() }
        for arguments in [["-p", "Print id"], ["-A", "yes=Yes", "-A", "No", "Named"], ["-A", "No", "-A", "x=Y", "Indexed"],
                          ["-p", "-A", " snooze = Snooze 5 min ", "Trimmed"]] {
            let before = recorder.calls.count
            let reference = try runProgram("/usr/bin/notify-send", arguments.map { Array($0.utf8) }, environment: bus.environment())
            let ours = try runChime(["notify"] + arguments, environment: bus.environment())
            let calls = recorder.waitForCalls(before + 2)
            try #require(calls.count == before + 2)
            expectSameCall(calls[before], calls[before + 1], appNameMatters: false)
            // Same output, with each program's own id where it prints one.
            let expected = reference.stdout.replacingOccurrences(of: "\(before + 1)\n", with: "\(before + 2)\n")
            #expect(ours.stdout == expected, "\(arguments)")
            #expect(ours.status == reference.status)
        }
    }

    func expectSameCall(_ reference: RecordingServer.Call, _ ours: RecordingServer.Call, appNameMatters: Bool,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reference.arguments.map(\.signature) == ours.arguments.map(\.signature), sourceLocation: sourceLocation)
        if appNameMatters { #expect(reference.appName == ours.appName, sourceLocation: sourceLocation) }
        #expect(Array(reference.arguments.dropFirst().dropLast(2)) == Array(ours.arguments.dropFirst().dropLast(2)), sourceLocation: sourceLocation)
        #expect(reference.expireTimeout == ours.expireTimeout, sourceLocation: sourceLocation)
        var theirs = reference.hints
        var mine = ours.hints
        // Each sends its own process id.
        if case .int64 = theirs["sender-pid"], case .int64 = mine["sender-pid"] {
            theirs["sender-pid"] = nil
            mine["sender-pid"] = nil
        }
        #expect(theirs == mine, sourceLocation: sourceLocation)
    }
}
