import DBus
import Notifications
import Testing

/// notify-send's argument syntax, as libnotify 0.8.1 reads it.
@Suite struct NotifySendSyntaxTests {
    @Test(arguments: [
        ("int:n:5", Hint.custom(name: "n", value: .int32(5))),
        ("int:x:5", .x(5)),
        ("INT:n:4294967297", .custom(name: "n", value: .int32(1))),  // wraps like a C cast
        ("int:n:12abc", .custom(name: "n", value: .int32(12))),
        ("double:d:1.5", .custom(name: "d", value: .double(1.5))),
        ("double:d:1e3", .custom(name: "d", value: .double(1000))),
        ("byte:b:7", .custom(name: "b", value: .byte(7))),
        ("byte:b:abc", .custom(name: "b", value: .byte(0))),
        ("byte:urgency:2", .urgency(.critical)),
        ("boolean:t:true", .custom(name: "t", value: .boolean(true))),
        ("boolean:t:TRUE", .custom(name: "t", value: .boolean(true))),
        ("boolean:t:7", .custom(name: "t", value: .boolean(true))),
        ("boolean:t:no", .custom(name: "t", value: .boolean(false))),
        ("string:s:a:b:c", .custom(name: "s", value: .string("a:b:c"))),
        ("string:category:im", .category("im")),
        ("string:desktop-entry:chime", .desktopEntry("chime")),
        ("variant:v:('a', <1>)", .custom(name: "v", value: .structure([.string("a"), .variant(.int32(1))]))),
        ("variant:v:@as []", .custom(name: "v", value: .array(element: .string, []))),
        ("variant:v:uint32 7", .custom(name: "v", value: .uint32(7))),
        ("variant:v:{'k': <true>}", .custom(name: "v", value: .vardict([("k", .boolean(true))]))),
        ("variant:v:[1, 2.5]", .custom(name: "v", value: .array(element: .double, [.double(1), .double(2.5)]))),
        ("variant:v:objectpath '/a/b'", .custom(name: "v", value: .objectPath("/a/b"))),
        ("variant:v:\"it\\'s\"", .custom(name: "v", value: .string("it's"))),
        // A variant written as the value is a variant in the entry's variant, as notify-send sends it.
        ("variant:x-pos:<int32 5>", .custom(name: "x-pos", value: .variant(.int32(5)))),
        ("variant:x:<int32 5>", .custom(name: "x", value: .variant(.int32(5)))),
        ("variant:x:int32 5", .x(5)),
    ])
    func hints(_ text: String, _ expected: Hint) throws {
        #expect(try NotifySendSyntax.hint(text) == expected)
    }

    /// On the wire, `variant:x-pos:<int32 5>` is the entry's variant holding the variant `<int32 5>`.
    @Test func aVariantInAVariantKeepsBothLevels() throws {
        let hints = Hint.dictionary([try NotifySendSyntax.hint("variant:x-pos:<int32 5>")])
        #expect(hints.dictionaryEntries?.first?.value == .variant(.variant(.int32(5))))
        // Read back as a server reads it, the inner variant is kept.
        #expect(Hint(name: "x-pos", value: .variant(.variant(.int32(5)))) == .custom(name: "x-pos", value: .variant(.int32(5))))
    }

    @Test(arguments: [
        ("int:x:-5", "value \"-5\" of hint \"x\" could not be parsed as type \"int\""),
        ("double:x:.5", "value \".5\" of hint \"x\" could not be parsed as type \"double\""),
        ("byte:x:256", "value \"256\" of hint \"x\" could not be parsed as type \"byte\""),
        ("byte:x:-1", "value \"-1\" of hint \"x\" could not be parsed as type \"byte\""),
        ("int:x", "invalid hint \"int:x\": use TYPE:NAME:VALUE"),
        ("foo:x:5", "invalid hint type \"foo\": use one of boolean, int, double, string, byte, variant"),
    ])
    func badHintsSayWhy(_ text: String, _ message: String) {
        #expect { try NotifySendSyntax.hint(text) } throws: { ($0 as? NotifySendSyntaxError)?.message == message }
    }

    @Test(arguments: ["variant:v:[]", "variant:v:(", "variant:v:nothing", "variant:v:<1", "variant:v:'open",
                      "variant:v:byte 300", "variant:v:@i 'x'", "variant:v:objectpath 'x'", "variant:v:1 2"])
    func badVariantsAreRefused(_ text: String) {
        #expect(throws: NotifySendSyntaxError.self) { try NotifySendSyntax.hint(text) }
    }

    @Test func actionsAreNamedOrIndexed() {
        #expect(NotifySendSyntax.actions(["yes=Yes", "No", " a = b ", "=empty", "nolabel=", "Maybe"]) == [
            Action(key: "yes", label: "Yes"), Action(key: "1", label: "No"), Action(key: "a", label: "b"),
            Action(key: "5", label: "Maybe"),
        ])
    }

    @Test func bodyEscapesExpandLikeGStrcompress() throws {
        #expect(try NotifySendSyntax.compressBody(#"a\nb\tc\\d\"e\q"#) == "a\nb\tc\\d\"eq")
        #expect(try NotifySendSyntax.compressBody(#"\101\102C"#) == "ABC")
        #expect(try NotifySendSyntax.compressBody(#"cut\0here"#) == "cut")
        #expect(try NotifySendSyntax.compressBody("trailing\\") == "trailing")
        #expect(throws: NotifySendSyntaxError.self) { try NotifySendSyntax.compressBody(#"\377"#) }
    }
}
