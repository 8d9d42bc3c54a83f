@testable import ICalendar
import Testing
import TestSupport
import Timekeeping

/// A big calendar is read as two halves on two threads and joined (`Parser.inTwoHalves`): whatever
/// the file, and wherever the halves meet, the join gives what reading it in order gives, or gives
/// nothing and the file is read in order (which says what is wrong, and where).
@Suite struct ParserHalvesTests {
    /// Lines of components nested as a calendar nests them, or (now and then) not: a property at the
    /// top, an END without its BEGIN, one that closes another, one never ended, too deep, a line
    /// that is no content line.
    static func calendar(_ g: inout SplitMix, broken: Bool) -> [String] {
        var lines: [String] = []
        var open: [String] = []
        let names = ["VCALENDAR", "VEVENT", "VALARM", "VTIMEZONE", "STANDARD", "X-THING"]
        func component(_ depth: Int) {
            let name = depth == 0 ? "VCALENDAR" : names[Int.random(in: 1..<names.count, using: &g)]
            lines.append("BEGIN:\(Bool.random(using: &g) ? name : name.lowercased())")
            open.append(name)
            for _ in 0..<Int.random(in: 0...4, using: &g) {
                if depth < 4, Int.random(in: 0..<3, using: &g) == 0 { component(depth + 1) } else { lines.append("SUMMARY:line \(lines.count)") }
            }
            lines.append("END:\(open.removeLast())")
        }
        for _ in 0..<Int.random(in: 1...3, using: &g) { component(0) }
        if broken {
            let at = Int.random(in: 0...lines.count, using: &g)
            let faults = ["SUMMARY:at the top", "END:VEVENT", "END:VCALENDAR", "BEGIN:VEVENT", "no colon here", "BEGIN:",
                          String(repeating: "BEGIN:X\n", count: 17).trimmingCharacters(in: .newlines)]
            lines.insert(contentsOf: faults[Int.random(in: 0..<faults.count, using: &g)].split(separator: "\n").map(String.init), at: at)
        }
        return lines
    }

    @Test func theHalvesJoinedAreTheFileReadInOrder() throws {
        var g = SplitMix(seed: 35)
        var joined = 0
        var refused = 0
        for round in 0..<3000 {
            let broken = round % 3 == 0
            let text = Self.calendar(&g, broken: broken).joined(separator: "\r\n") + "\r\n"
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                let lines = ContentLine.logicalLines(buffer)
                let inOrder = Result { () throws(ParseError) in try Parser.inOrder(lines[...], buffer) }
                guard let halves = Parser.inTwoHalves(lines, buffer) else {
                    refused += 1
                    // Only what is wrong is read again in order.
                    #expect(throws: ParseError.self, "\(text)") { try inOrder.get() }
                    return
                }
                joined += 1
                #expect(halves == (try? inOrder.get()), "\(text)")
            }
        }
        #expect(joined > 1500 && refused > 500)  // both ways were taken, many times
    }

    /// The way `parse` takes for a big file gives what reading it in order gives.
    @Test func aBigFileIsReadTheSameEitherWay() throws {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0"]
        for i in 0..<3000 {
            lines += ["BEGIN:VEVENT", "UID:\(i)@x", "DTSTART:20261201T090000Z", "SUMMARY:Meeting \(i)", "BEGIN:VALARM", "TRIGGER:-PT5M",
                      "END:VALARM", "END:VEVENT"]
        }
        lines.append("END:VCALENDAR")
        let bytes = Array(lines.joined(separator: "\r\n").utf8)
        let parsed = try Parser.parse(bytes: bytes)
        let reference = try bytes.withUnsafeBufferPointer { buffer in try Parser.inOrder(ContentLine.logicalLines(buffer)[...], buffer) }
        #expect(parsed == reference)
        #expect(parsed.first?.components.count == 3000)
    }
}
