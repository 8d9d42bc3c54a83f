// Random D-Bus values of random types, for property tests of the D-Bus layer and of the daemon's doors.
import DBus

public func randomString(_ r: inout SplitMix) -> String {
    let alphabet = Array("aZ09 _-/ßé✓🔔\u{7f}\t\n'\"\\")
    return String((0..<r.below(8)).map { _ in alphabet[r.below(alphabet.count)] })
}

public func randomBasic(_ r: inout SplitMix, _ type: DBusType) -> Value {
    switch type {
    case .byte: .byte(UInt8(truncatingIfNeeded: r.next()))
    case .boolean: .boolean(r.next() & 1 == 1)
    case .int16: .int16(Int16(truncatingIfNeeded: r.next()))
    case .uint16: .uint16(UInt16(truncatingIfNeeded: r.next()))
    case .int32: .int32(Int32(truncatingIfNeeded: r.next()))
    case .uint32: .uint32(UInt32(truncatingIfNeeded: r.next()))
    case .int64: .int64(Int64(bitPattern: r.next()))
    case .uint64: .uint64(r.next())
    case .double:
        // NaN never equals itself; every other double must come back bit for bit.
        { let d = Double(bitPattern: r.next()); return .double(d.isNaN ? 0.5 : d) }()
    case .objectPath: .objectPath(r.below(2) == 0 ? .root : ObjectPath(stringLiteral: "/org/chime/x\(r.below(100))"))
    case .signature: .signature(Signature(stringLiteral: ["", "s", "a{sv}", "(iiibiiay)"][r.below(4)]))
    default: .string(randomString(&r))
    }
}

public let basicTypes: [DBusType] = [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature]

public func randomType(_ r: inout SplitMix, depth: Int) -> DBusType {
    if depth > 4 || r.below(3) == 0 { return basicTypes[r.below(basicTypes.count)] }
    switch r.below(4) {
    case 0: return .array(randomType(&r, depth: depth + 1))
    case 1: return .dictionary(key: basicTypes[r.below(basicTypes.count)], value: randomType(&r, depth: depth + 1))
    case 2: return .structure((0...r.below(3)).map { _ in randomType(&r, depth: depth + 1) })
    default: return .variant
    }
}

public func randomValue(_ r: inout SplitMix, of type: DBusType, depth: Int) -> Value {
    switch type {
    case .array(.dictionaryEntry(let key, let value)):
        return .dictionary(key: key, value: value, (0..<r.below(3)).map { _ in
            .init(key: randomBasic(&r, key), value: randomValue(&r, of: value, depth: depth + 2))
        })
    case .array(let element):
        return .array(element: element, (0..<r.below(4)).map { _ in randomValue(&r, of: element, depth: depth + 1) })
    case .structure(let fields):
        return .structure(fields.map { randomValue(&r, of: $0, depth: depth + 1) })
    case .variant:
        return .variant(randomValue(&r, depth: depth + 1))
    default:
        return randomBasic(&r, type)
    }
}

public func randomValue(_ r: inout SplitMix, depth: Int) -> Value {
    randomValue(&r, of: randomType(&r, depth: depth), depth: depth)
}
