import DBus
import Testing

@Suite struct NamesTests {
    @Test(arguments: ["/", "/org", "/org/freedesktop/Notifications", "/a_b/C9"])
    func validObjectPaths(_ text: String) throws {
        #expect(try ObjectPath(validating: text).rawValue == text)
    }

    @Test(arguments: ["", "org", "/org/", "//", "/org//x", "/org/free-desktop", "/ä", "/a b"])
    func invalidObjectPathsAreRejected(_ text: String) {
        #expect(throws: InvalidNameError.self) { try ObjectPath(validating: text) }
    }

    @Test(arguments: [":1.42", ":1.0", "org.freedesktop.Notifications", "org.kde-x.y_z", "a.b"])
    func validBusNames(_ text: String) throws {
        #expect(try BusName(validating: text).rawValue == text)
    }

    @Test(arguments: ["", "org", ".org.x", "org.", "org..x", "org.1x", "org.x!", ":", String(repeating: "a.", count: 130) + "a"])
    func invalidBusNamesAreRejected(_ text: String) {
        #expect(throws: InvalidNameError.self) { try BusName(validating: text) }
    }

    @Test func interfaceMemberAndErrorNames() throws {
        #expect(try InterfaceName(validating: "org.freedesktop.Notifications").rawValue == "org.freedesktop.Notifications")
        #expect(throws: InvalidNameError.self) { try InterfaceName(validating: "org.free-desktop.X") }
        #expect(throws: InvalidNameError.self) { try InterfaceName(validating: "Notifications") }
        #expect(try MemberName(validating: "Notify").rawValue == "Notify")
        #expect(throws: InvalidNameError.self) { try MemberName(validating: "1Notify") }
        #expect(throws: InvalidNameError.self) { try MemberName(validating: "No.tify") }
        #expect(throws: InvalidNameError.self) { try MemberName(validating: "") }
        #expect(try ErrorName(validating: "org.example.Error.Failed").rawValue == "org.example.Error.Failed")
        #expect(throws: InvalidNameError.self) { try ErrorName(validating: "Failed") }
    }

    @Test(arguments: ["", "s", "susssasa{sv}i", "a(iiibiiay)", "a{oa{sa{sv}}}", "(ss)v", "ah"])
    func validSignaturesRoundTrip(_ text: String) throws {
        #expect(try Signature(validating: text).rawValue == text)
    }

    @Test(arguments: ["a", "(", "()", "{sv}", "a{vs}", "a{ss", "a{sss}", "z", ")", String(repeating: "a", count: 33) + "s",
                      String(repeating: "(", count: 33) + "s" + String(repeating: ")", count: 33)])
    func invalidSignaturesAreRejected(_ text: String) {
        #expect(throws: InvalidNameError.self) { try Signature(validating: text) }
    }

    @Test func errorsSayWhatIsWrong() {
        do {
            _ = try ObjectPath(validating: "/org//x")
            Issue.record("accepted an empty path element")
        } catch {
            #expect(error.description == "invalid object path \"/org//x\": it contains an empty element ('//')")
        }
    }
}
