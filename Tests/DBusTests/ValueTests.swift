import DBus
import Testing

@Suite struct ValueTests {
    @Test func signaturesAreComputedFromTheValue() {
        #expect(Value.string("x").signature == "s")
        #expect(Value.vardict([("urgency", .byte(1))]).signature == "a{sv}")
        #expect(Value.array(element: .string, []).signature == "as")
        #expect(Value.structure([.int32(1), .array(element: .byte, [])]).signature == "(iay)")
        #expect(Value.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .variant), []).signature == "a{oa{sv}}")
    }

    @Test func validationRejectsWhatLibdbusWouldAbortOn() {
        #expect(throws: InvalidValueError.self) { try Value.string("a\0b").validate() }
        #expect(throws: InvalidValueError.self) { try Value.array(element: .string, [.int32(1)]).validate() }
        #expect(throws: InvalidValueError.self) { try Value.dictionary(key: .variant, value: .string, []).validate() }
        #expect(throws: InvalidValueError.self) { try Value.structure([]).validate() }
        #expect(throws: InvalidValueError.self) { try Value.unixFD(-1).validate() }
        var deep = Value.int32(1)
        for _ in 0..<65 { deep = .variant(deep) }
        #expect(throws: InvalidValueError.self) { try deep.validate() }
        var deepArrays = Value.array(element: .int32, [])
        for _ in 0..<32 { deepArrays = .array(element: deepArrays.type, [deepArrays]) }
        #expect(throws: InvalidValueError.self) { try Value.variant(deepArrays).validate() }
    }

    @Test func messagesRefuseInvalidValuesWithoutCrashing() throws {
        #expect(throws: InvalidValueError.self) {
            try Message.methodCall(destination: "org.example.X", path: "/", interface: "org.example.X", member: "M",
                                   arguments: [.string("nul\0inside")])
        }
        let message = try Message.methodCall(destination: "org.example.X", path: "/", interface: "org.example.X", member: "M")
        #expect(throws: InvalidValueError.self) { try message.append([.dictionary(key: .string, value: .string, [.init(key: .string("k"), value: .int32(1))])]) }
    }

    @Test func typedConversions() throws {
        let hints: [String: Value] = ["urgency": .byte(2)]
        #expect(hints.dbusValue.signature == "a{sv}")
        #expect(try [String: Value](dbusValue: hints.dbusValue) == ["urgency": .byte(2)])
        #expect(try [String](dbusValue: .strings(["a", "b"])) == ["a", "b"])
        #expect(try UInt32(dbusValue: .variant(.uint32(7))) == 7)
        #expect(throws: TypeMismatchError.self) { try UInt32(dbusValue: .int32(7)) }
        #expect([Int32].dbusType == .array(.int32))
    }

    @Test func everyShapeSurvivesMarshalling() throws {
        for value in sampleValues() {
            let message = try Message.methodCall(destination: nil, path: "/", interface: nil, member: "M", arguments: [value])
            #expect(message.signature == value.signature)
            #expect(message.arguments() == [value])
        }
    }
}

/// One value of every type code and container shape.
func sampleValues() -> [Value] {
    [
        .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(.min), .uint16(.max), .int32(-7), .uint32(.max),
        .int64(.min), .uint64(.max), .double(-1.5e300), .double(0), .string(""), .string("héllo ✓ 🔔"),
        .objectPath("/org/chime"), .signature("a{sv}"), .variant(.string("inner")), .variant(.variant(.int32(1))),
        .array(element: .byte, []), .array(element: .byte, [.byte(1), .byte(2), .byte(255)]),
        .array(element: .string, [.string("a"), .string("b")]), .array(element: .array(.int32), [.array(element: .int32, [.int32(1)])]),
        .dictionary(key: .string, value: .variant, []), .vardict([("urgency", .byte(2)), ("x", .int32(5))]),
        .dictionary(key: .int64, value: .string, [.init(key: .int64(1), value: .string("one"))]),
        .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .variant),
                    [.init(key: .objectPath("/a"), value: .vardict([("k", .boolean(true))]))]),
        .structure([.int32(1)]), .structure([.string("a"), .structure([.double(2.5), .array(element: .uint16, [.uint16(3)])])]),
        .structure([.int32(64), .int32(64), .int32(256), .boolean(true), .int32(8), .int32(4),
                    .array(element: .byte, (0..<16).map { .byte(UInt8($0)) })]),
    ]
}
