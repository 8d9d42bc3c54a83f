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
        ["-e", "-u", "low", "-t", "1200", "-a", "alarm", "-c", "x", "--", "-dash summary", "-dash body"],
        // Differences a comparison of 60 command lines found (issue 14):
        ["-r", "-1", "Replace minus one"],
        ["-t", "-5", "Minus five"],
        ["-h", "variant:x:<int32 5>", "Variant in a variant"],
        ["-h", "variant:x-pos:<int32 5>", "Variant in a variant, custom name"],
        ["-h", "variant:v:<<'x'>>", "Variant in a variant in a variant"],
        ["-h", "string:x-tag:", "Empty string hint"],
        ["--transient=true", "Transient true"],
        ["--transient=false", "A flag given any value is set"],
        ["-h", "string:category:", "-c", "kept", "An empty string hint sets nothing"],
        ["-h", "string:x-tag:first", "-h", "string:x-tag:", "An empty string hint leaves an earlier one"],
        ["-r", "2147483647", "Largest replace id"],
        // More of what scripts write (issue 14 asks for 100 command lines on the wire).
        ["-u", "Low", "Mixed-case urgency"],
        ["-u", "NORMAL", "Upper-case urgency"],
        ["--urgency", "critical", "Separate long value"],
        ["-t", "1", "One millisecond"],
        ["-t", "2147483647", "Largest expire time"],
        ["-t", "-2147483648", "Smallest expire time"],
        ["--expire-time", "100", "Long form, separate value"],
        ["-a", "Ünïcödé app", "Unicode app name"],
        ["--app-name=x y", "App name with a space"],
        ["-c", "a,b,c", "Three categories"],
        ["--category=device.added", "Long category"],
        ["--transient", "Long transient"],
        ["-e", "-e", "Transient twice"],
        ["-h", "int:n:0", "Int zero"],
        ["-h", "int:n:42", "Int"],
        ["-h", "int:n:2147483648", "Int that wraps"],
        ["-h", "int:n:7abc", "Int with trailing letters"],
        ["-h", "double:d:3.14", "Double"],
        ["-h", "double:d:0", "Double zero"],
        ["-h", "double:d:1e-3", "Double with exponent"],
        ["-h", "byte:b:0", "Byte zero"],
        ["-h", "byte:b:255", "Largest byte"],
        ["-h", "byte:b:12x", "Byte with trailing letter"],
        ["-h", "boolean:b:TRUE", "Upper-case true"],
        ["-h", "boolean:b:false", "False"],
        ["-h", "boolean:b:0", "Boolean zero"],
        ["-h", "boolean:b:1", "Boolean one"],
        ["-h", "boolean:b:yes", "Boolean yes is false"],
        ["-h", "STRING:s:upper type", "Upper-case type"],
        ["-h", "string:s:a:b:c", "String with colons"],
        ["-h", "string:s:ünï ✓", "Unicode string hint"],
        ["-h", "string:desktop-entry:org.example.App", "Desktop entry"],
        ["-h", "string:sound-name:message-new-instant", "Sound name"],
        ["-h", "string:sound-file:/usr/share/sounds/x.oga", "Sound file"],
        ["-h", "boolean:suppress-sound:true", "Suppress sound"],
        ["-h", "boolean:resident:true", "Resident"],
        ["-h", "int:x:100", "-h", "int:y:200", "Position"],
        ["-h", "variant:v:<'x'>", "Variant holding a string"],
        ["-h", "variant:v:uint32 7", "Variant uint32"],
        ["-h", "variant:v:int64 -5", "Variant int64"],
        ["-h", "variant:v:true", "Variant boolean"],
        ["-h", "variant:v:@ay []", "Variant empty byte array"],
        ["-h", "variant:v:[1, 2, 3]", "Variant int array"],
        ["-h", "variant:v:('x', 1, true)", "Variant tuple of three"],
        ["-h", "variant:v:{'a': <'b'>}", "Variant dict of variants"],
        ["-h", "variant:v:3.5", "Variant double"],
        ["-h", "variant:v:'quoted'", "Variant string"],
        ["-h", "string:s:one", "-h", "string:s:two", "A later hint replaces an earlier one"],
        ["Summary", ""],
        ["Escapes", #"bell\a form\f vertical\v octal\101 unknown\q"#],
        ["Escapes", #"carriage\rreturn and a trailing backslash\"#],
        ["Multi\nline summary", "body"],
        ["Markup <b>summary</b>", "<i>body</i> <a href=\"https://example.org\">link</a>"],
        ["Tabs\tin summary", "and\tbody"],
        [String(repeating: "long ", count: 200), String(repeating: "body ", count: 400)],
        ["-r", "0", "Replace zero"],
        ["-r", "1", "Replace one"],
        ["--replace-id=5", "Replace, long form"],
        ["Summary", "-t", "100", "Options after the summary"],
        ["--", "-t", "Double dash makes an option a summary"],
        ["-u", "low", "-u", "critical", "The last urgency wins"],
        ["-t", "100", "-t", "200", "The last expire time wins"],
        ["-a", "first", "-a", "second", "The last app name wins"],
        ["-c", "first", "-c", "second", "The last category wins"],
        ["-eu", "low", "Cluster of a flag and a value option"],
        ["-pe", "Cluster of two flags"],
        ["--print-id", "--transient", "Long flags"],
        ["-h", "double:d:2.50000", "Double with trailing zeros"],
        // Issue 25: the rest of notify-send.c's hint readers, value by value (strtoull, g_strtod, casts).
        ["-h", "byte:b:abc", "Byte that is no number is zero"],
        ["-h", "double:d:5.5abc", "Double with trailing letters"],
        ["-h", "double:d:1,5", "Double with a comma"],
        ["-h", "int:n:0x10", "Int in hexadecimal is zero"],
        ["-h", "int:n:18446744073709551616", "Int beyond 64 bits"],
        ["-h", "int:n:4294967295", "Int that wraps to minus one"],
        ["-h", "boolean:b:True", "Mixed-case true"],
        ["-h", "boolean:b:007", "Boolean with leading zeros"],
        ["-h", "boolean:b:0x1", "Boolean in hexadecimal"],
        ["-h", "boolean:b:", "Empty boolean"],
        ["-h", "Variant:v:5", "Mixed-case variant type"],
        ["-h", "int:n:00042", "Int with leading zeros"],
        ["-h", "double:d:0.1e400", "Double that overflows"],
    ]

    /// notify-send's newer behaviour chime follows where Debian's 0.8.1 differs (README, "notify-send"):
    /// `-i` is an image hint (image-path for spec 1.2 servers) instead of the app icon, and a byte
    /// hint reads "0x11" as hexadecimal.
    static let newerCases: [(arguments: [String], reference: [String])] = [
        (["-i", "dialog-information", "Icon as image"], ["-h", "string:image-path:dialog-information", "Icon as image"]),
        (["-i", "/usr/share/icons/x.png", "Icon path as image"], ["-h", "string:image-path:/usr/share/icons/x.png", "Icon path as image"]),
        (["-h", "byte:b:0x11", "Hexadecimal byte"], ["-h", "byte:b:17", "Hexadecimal byte"]),
        (["-h", "byte:b:0xff", "Largest hexadecimal byte"], ["-h", "byte:b:255", "Largest hexadecimal byte"]),
        (["-h", "byte:b:0x1G", "Hexadecimal byte with a trailing letter"], ["-h", "byte:b:1", "Hexadecimal byte with a trailing letter"]),
        (["-h", "byte:b:0x", "Hexadecimal byte without digits"], ["-h", "byte:b:0", "Hexadecimal byte without digits"]),
        (["-n", "app-icon-name", "App icon"], ["-i", "app-icon-name", "App icon"]),
        (["--app-icon=/tmp/app.png", "App icon path"], ["-i", "/tmp/app.png", "App icon path"]),
        (["-n", "app", "-i", "image", "Both"], ["-i", "app", "-h", "string:image-path:image", "Both"]),
    ]

    /// chime following libnotify 0.8.7 sends what Debian's notify-send sends for the equivalent older
    /// command line.
    @Test(arguments: newerCases.map { [$0.arguments, $0.reference] })
    func newerBehaviourOnTheWire(_ pair: [[String]]) throws {
        let (reference, ours, calls) = try besideNotifySend(pair[1], calls: 2) { try runChime(["notify"] + pair[0], environment: $0) }
        try #require(reference.status == 0, "notify-send failed: \(reference.stderr)")
        #expect(ours.status == 0, "\(ours.stderr)")
        try #require(calls.count == 2)
        expectSameCall(calls[0], calls[1], appNameMatters: false)
    }

    /// Where notify-send refuses, chime refuses with the same words (and its own usage status).
    @Test(arguments: [[""], ["", "Body"], ["--expire-time=", "Summary"], ["--replace-id=", "Summary"]])
    func sameRefusal(_ arguments: [String]) throws {
        let (reference, ours, calls) = try besideNotifySend(arguments, calls: 0) { try runChime(["notify"] + arguments, environment: $0) }
        #expect(reference.status == 1)
        #expect(ours.status == 64)
        #expect(ours.stderr == "chime: " + reference.stderr, "\(arguments)")
        #expect(calls.isEmpty)
    }

    @Test func helpAllIsHelp() throws {
        let reference = try runProgram("/usr/bin/notify-send", [Array("--help-all".utf8)], environment: ["PATH": "/usr/bin:/bin"])
        let ours = try runChime(["notify", "--help-all"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(reference.status == 0 && ours.status == 0)
        #expect(ours.stdout.contains("--expire-time") && ours.stdout.contains("--transient"))
    }

    @Test(arguments: cases)
    func sameCallOnTheWire(_ arguments: [String]) throws {
        let (reference, ours, calls) = try besideNotifySend(arguments, calls: 2) { try runChime(["notify"] + arguments, environment: $0) }
        try #require(reference.status == 0, "notify-send failed: \(reference.stderr)")
        #expect(ours.status == 0, "\(ours.stderr)")
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
