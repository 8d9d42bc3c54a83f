/// Appends `text` as a JSON string: quotes and backslashes escaped, control characters as `\n`,
/// `\r`, `\t` or `\u00XX`; everything else passes through as it is. Used where JSON is written
/// straight into a byte buffer (the CLI's output: `chime list --json` of 100,000 alarms, a million
/// strings): runs of bytes that need no escape go in at once.
@inlinable
package func appendJSONString(_ text: String, to out: inout [UInt8]) {
    var text = text
    text.withUTF8 { bytes in
        out.append(UInt8(ascii: "\""))
        var run = 0
        for i in 0..<bytes.count {
            let byte = bytes[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if i > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
            appendJSONString(CollectionOfOne(byte), to: &out, quoted: false)
            run = i + 1
        }
        if bytes.count > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<bytes.count])) }
        out.append(UInt8(ascii: "\""))
    }
}

/// Appends UTF-8 `bytes` as a JSON string (or, `quoted: false`, its inside), escaped as above.
/// Inlinable, so each caller gets a copy specialized for its byte sequence.
@inlinable
package func appendJSONString<Bytes: Sequence<UInt8>>(_ bytes: Bytes, to out: inout [UInt8], quoted: Bool = true) {
    func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }
    if quoted { out.append(UInt8(ascii: "\"")) }
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
        case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
        case 0x0a: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0d: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex(byte >> 4), hex(byte & 15)]
        default: out.append(byte)
        }
    }
    if quoted { out.append(UInt8(ascii: "\"")) }
}
