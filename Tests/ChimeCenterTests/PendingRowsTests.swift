import ChimeCenter
import DBus
import Testing
import Timekeeping

/// The rows of `ListPendingFile` read back as written, and what is not a listing (cut short, not
/// UTF-8, another format) is refused rather than misread.
@Suite struct PendingRowsTests {
    static let rows = [
        PendingSummary(identifier: "tea", nextFire: Instant(seconds: 1_795_000_000, nanosecond: 250_000_000), title: "Tea \"now\"\n",
                       label: "", timeZone: "Europe/Berlin", origin: .file, state: .held, note: "no server", rule: "16:35 mon-fri",
                       sound: "bell"),
        PendingSummary(identifier: "ümlaut ☕", nextFire: nil, title: "", label: "x", timeZone: nil, state: .quarantined, note: "bad"),
    ]

    static func written(_ rows: [PendingSummary]) -> [UInt8] {
        var bytes = PendingRows.magic
        for row in rows { PendingRows.append(row, to: &bytes) }
        return bytes
    }

    @Test func rowsReadBackAsWritten() throws {
        let bytes = Self.written(Self.rows)
        #expect(try bytes.withUnsafeBytes { try PendingRows.read($0) } == Self.rows)
        #expect(try PendingRows.magic.withUnsafeBytes { try PendingRows.read($0) }.isEmpty)
    }

    @Test func whatIsNotAListingIsRefused() {
        let bytes = Self.written(Self.rows)
        // Cut anywhere inside the rows.
        for cut in stride(from: PendingRows.magic.count + 1, to: bytes.count, by: 7) {
            #expect(throws: DBusError.self) { try Array(bytes[..<cut]).withUnsafeBytes { try PendingRows.read($0) } }
        }
        // Another format, and a field that is not UTF-8 (the title's first byte made 0xFF).
        #expect(throws: DBusError.self) { try Array("CHIMEPL2".utf8).withUnsafeBytes { try PendingRows.read($0) } }
        var broken = bytes
        let title = PendingRows.magic.count + 4 + 3 + 8 + 4
        broken[title] = 0xFF
        #expect(throws: DBusError.self) { try broken.withUnsafeBytes { try PendingRows.read($0) } }
    }
}
