import Testing
@testable import Timekeeping

/// The one content-line reader (RFC 5545 §3.1) under recurrence rules, import, export and followed
/// calendars: parameters quoted and multi-valued, folds joined as bytes, line numbers, errors that
/// say where, and what it writes reads back the same.
@Suite struct ContentLineTests {
    @Test func aQuotedParameterHoldsWhatWouldOtherwiseEndIt() throws {
        let line = try ContentLine.read(#"ATTENDEE;CN="Doe; John: the 2nd";ROLE=REQ-PARTICIPANT:mailto:john@example.org"#)
        #expect(line.name == "ATTENDEE")
        #expect(line.parameters["CN"] == "Doe; John: the 2nd")
        #expect(line.parameters["ROLE"] == "REQ-PARTICIPANT")
        #expect(line.value == "mailto:john@example.org")
    }

    @Test func aParameterMayHaveSeveralValuesAndNamesAreReadInAnyCase() throws {
        let line = try ContentLine.read(#"attendee;member="mailto:a@x","mailto:b@x",plain;Member=late:v"#)
        #expect(line.name == "ATTENDEE")
        #expect(line.parameters.values("MEMBER") == ["mailto:a@x", "mailto:b@x", "plain", "late"])
        #expect(line.parameters["MEMBER"] == "mailto:a@x")
        #expect(line.value == "v")
    }

    @Test func foldsAreJoinedAsBytesEvenInsideACharacterAndLinesKeepTheirNumbers() throws {
        // "é" is C3 A9: the fold falls between its two bytes, as a 75-octet folder may put it.
        let bytes: [UInt8] = Array("BEGIN:VCALENDAR\r\nSUMMARY:caf".utf8) + [0xC3] + Array("\r\n ".utf8) + [0xA9]
            + Array(" au lait\r\n\tand more\r\n\r\nEND:VCALENDAR\n".utf8)
        let lines = ContentLine.unfolded(bytes)
        #expect(lines.map(\.line) == [1, 2, 6])
        let summary = try lines[1].bytes.withUnsafeBufferPointer { buffer in
            try ContentLine.read(buffer, 0..<buffer.count, line: lines[1].line)
        }
        #expect(summary.value == "café au laitand more")
        #expect(summary.line == 2)
    }

    @Test(arguments: [
        ("X;CN=\"never closed:v", "X: a quoted parameter is never closed", 5),
        ("X;=v:w", "X: a parameter must be NAME=VALUE", 2),
        ("X;A=b", "X: no ':' before the value", 0),
        (":value", "not a content line (NAME:VALUE): :value", 0),
    ])
    func whatIsNotAContentLineSaysWhyAndWhere(_ text: String, _ message: String, _ offset: Int) {
        #expect(throws: ContentLine.ReadError.self) { try ContentLine.read(text) }
        do {
            _ = try ContentLine.read(text)
        } catch {
            #expect(error.message == message)
            #expect(error.offset == offset)
        }
    }

    @Test func aStrayQuoteInsideAValueIsKeptRatherThanRefused() throws {
        let line = try ContentLine.read(#"X-A;CN=O"Brien:v"#)
        #expect(line.parameters["CN"] == #"O"Brien"#)
        #expect(line.value == "v")
    }

    @Test func whatIsWrittenReadsBackTheSame() throws {
        var line = ContentLine(name: "DTSTART", value: "20261127T163500")
        line.parameters["TZID"] = "Europe/Berlin"
        line.parameters["X-NOTE"] = "a;b,c:d"
        let read = try ContentLine.read(line.written)
        #expect(line.written == #"DTSTART;TZID=Europe/Berlin;X-NOTE="a;b,c:d":20261127T163500"#)
        #expect(read.name == line.name && read.parameters == line.parameters && read.value == line.value)
    }

    @Test func aRecurrenceFromLinesIsTheOneItsTextReads() throws {
        let text = "DTSTART;TZID=Europe/Berlin:20261127T163500 RRULE:FREQ=MONTHLY;BYDAY=-1FR EXDATE;TZID=Europe/Berlin:20261225T163500"
        let parsed = try Recurrence(parsing: text)
        let fromLines = try Recurrence(lines: parsed.lines)
        #expect(fromLines == parsed)
        #expect(fromLines.next(after: 1_795_000_000, floatingZone: .utc) == parsed.next(after: 1_795_000_000, floatingZone: .utc))
        #expect(parsed.lines.map(\.name) == ["DTSTART", "RRULE", "EXDATE"])
    }

    @Test func aRecurrenceErrorPointsAtCharactersWhereTheTextIsNotASCII() {
        // "ü" is two bytes: the caret still sits under the bad part.
        let text = "DTSTART;X-NOTE=grün:20261127T163500 RRULE:FREQ=SOMETIMES"
        do {
            _ = try Recurrence(parsing: text)
            Issue.record("read a rule with FREQ=SOMETIMES")
        } catch {
            let start = text.distance(from: text.startIndex, to: text.range(of: "FREQ=SOMETIMES")!.lowerBound)
            #expect(error.offset == start)
            #expect(error.length == "FREQ=SOMETIMES".count)
        }
    }
}
