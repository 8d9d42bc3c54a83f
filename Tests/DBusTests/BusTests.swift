import DBus
import Foundation
import PropertyBased
import Testing
import TestSupport

/// Everything here runs against a real dbus-daemon started for the test.
@Suite struct BusTests {
    let bus: PrivateBus
    let echo: EchoServer

    init() throws {
        bus = try PrivateBus()
        do {
            echo = try EchoServer(address: bus.address)
        } catch {
            bus.stop()
            throw error
        }
    }

    func finish() {
        echo.stop()
        bus.stop()
    }

    func roundTrip(_ value: Value, on connection: Connection) throws -> Value? {
        try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                            member: "Echo", arguments: [.variant(value)]).first
    }

    @Test func everyValueShapeRoundTripsThroughTheBus() throws {
        defer { finish() }
        let connection = try bus.connect()
        #expect(connection.uniqueName.hasPrefix(":"))
        for value in sampleValues() {
            #expect(try roundTrip(value, on: connection) == .variant(value))
        }
    }

    @Test func fileDescriptorsArriveAsNewDescriptors() throws {
        defer { finish() }
        let connection = try bus.connect()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        guard case .variant(.unixFD(let received))? = try roundTrip(.unixFD(fds[1]), on: connection) else {
            Issue.record("no descriptor came back")
            return
        }
        #expect(received != fds[1])
        #expect(write(received, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 1 && byte == UInt8(ascii: "x"))
        close(received)
    }

    @Test func randomNestedValuesRoundTrip() async throws {
        defer { finish() }
        let connection = try bus.connect()
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let value = randomValue(&random, depth: 0)
            do {
                #expect(try roundTrip(value, on: connection) == .variant(value), "seed \(seed)")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func randomCallsFromThePeerNeverCrashTheServer() async throws {
        defer { finish() }
        let connection = try bus.connect()
        let members: [MemberName] = ["Echo", "Fail", "Ping", "Get", "GetAll", "Set", "Introspect", "Nope"]
        let interfaces: [InterfaceName?] = [EchoServer.interface, .properties, .introspectable, nil, "org.chime.Other"]
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix(seed: UInt64(seed))
            let arguments = (0..<random.below(4)).map { _ in randomValue(&random, depth: 0) }
            do {
                _ = try connection.call(
                    destination: EchoServer.name, path: EchoServer.path, interface: interfaces[random.below(interfaces.count)],
                    member: members[random.below(members.count)], arguments: arguments, timeout: .milliseconds(5000))
            } catch is DBusError {
                // An error reply is the expected answer to most of these.
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
        // The server is still there and still right.
        #expect(try roundTrip(.string("alive"), on: connection) == .variant(.string("alive")))
    }

    @Test func remoteErrorsKeepTheirNameMessageAndCall() throws {
        defer { finish() }
        let connection = try bus.connect()
        do {
            _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                    member: "Fail", arguments: [.string("as requested")])
            Issue.record("Fail did not fail")
        } catch let error as DBusError {
            #expect(error.name.rawValue == "org.chime.Test.Error.Requested")
            #expect(error.message == "as requested")
            #expect(error.call?.member == "Fail")
            #expect(error.call?.destination == EchoServer.name.rawValue)
        }
        do {
            _ = try connection.call(destination: "org.chime.Nobody", path: "/", interface: "org.chime.Nobody", member: "X")
            Issue.record("a call to nobody succeeded")
        } catch let error as DBusError {
            #expect(error.name == .serviceUnknown)
        }
        do {
            _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                    member: "Echo", arguments: [.string("not a variant")])
            Issue.record("a wrong signature was accepted")
        } catch let error as DBusError {
            #expect(error.name == .invalidArgs)
        }
        do {
            _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                    member: "NoSuchMethod")
            Issue.record("an unknown method was answered")
        } catch let error as DBusError {
            #expect(error.name == .unknownMethod)
        }
    }

    @Test func callsTimeOut() throws {
        defer { finish() }
        let connection = try bus.connect()
        let started = ContinuousClock.now
        do {
            _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                    member: "Sleep", arguments: [.uint32(1500)], timeout: .milliseconds(200))
            Issue.record("the call did not time out")
        } catch let error as DBusError {
            #expect(error.name == .noReply)
        }
        #expect(ContinuousClock.now - started < .milliseconds(1400))
    }

    @Test func pendingCallsCompleteWhileDispatching() throws {
        defer { finish() }
        let connection = try bus.connect()
        var results: [Value] = []
        var pendings: [PendingCall] = []
        for i in 0..<20 {
            let message = try Message.methodCall(destination: EchoServer.name, path: EchoServer.path,
                                                 interface: EchoServer.interface, member: "Echo",
                                                 arguments: [.variant(.int32(Int32(i)))])
            let pending = try connection.send(message, timeout: .milliseconds(5000))
            try pending.onCompletion { result in
                if case .success(let reply) = result { results.append(contentsOf: reply.arguments()) }
            }
            pendings.append(pending)
        }
        let outcome = connection.run(until: .now + .seconds(5)) { results.count < 20 }
        #expect(outcome == .finished)
        #expect(results == (0..<20).map { .variant(.int32(Int32($0))) })
        // The blocking form of a pending call.
        let message = try Message.methodCall(destination: EchoServer.name, path: EchoServer.path,
                                             interface: EchoServer.interface, member: "Echo", arguments: [.variant(.string("w"))])
        #expect(try connection.send(message, timeout: .default).wait().arguments() == [.variant(.string("w"))])
    }

    @Test func signalsReachSubscribersAndStopAfterUnsubscribing() throws {
        defer { finish() }
        let connection = try bus.connect()
        var pongs: [String] = []
        let token = try connection.subscribe(MatchRule(sender: EchoServer.name, interface: EchoServer.interface, member: "Pong")) {
            pongs.append($0.arguments().first?.stringValue ?? "?")
        }
        var ignored = 0
        try connection.subscribe(MatchRule(interface: EchoServer.interface, member: "Pong", arg0: "other")) { _ in ignored += 1 }
        _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                member: "Ping", arguments: [.string("it's one")])
        #expect(connection.run(until: .now + .seconds(5)) { pongs.isEmpty } == .finished)
        #expect(pongs == ["it's one"])
        #expect(ignored == 0)
        try connection.unsubscribe(token)
        _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                                member: "Ping", arguments: [.string("two")])
        #expect(connection.run(until: .now + .milliseconds(300)) { true } == .timedOut)
        #expect(pongs == ["it's one"])
    }

    @Test func nameOwnerChangesAreSeen() throws {
        defer { bus.stop() }
        let connection = try bus.connect()
        var changes: [(String, String)] = []
        try connection.watchNameOwner(EchoServer.name) { changes.append(($0, $1)) }
        #expect(try connection.nameHasOwner(EchoServer.name))
        let owner = try connection.nameOwner(EchoServer.name)
        echo.stop()
        #expect(connection.run(until: .now + .seconds(5)) { changes.isEmpty } == .finished)
        #expect(changes.first?.0 == owner)
        #expect(changes.first?.1 == "")
        #expect(try connection.nameOwner(EchoServer.name) == nil)
    }

    @Test func exportedObjectsAreIntrospectableAndHaveProperties() throws {
        defer { finish() }
        let connection = try bus.connect()
        let xml = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: .introspectable,
                                      member: "Introspect").first?.stringValue ?? ""
        #expect(xml.contains("<interface name=\"org.chime.Test.Echo\">"))
        #expect(xml.contains("<method name=\"Echo\">"))
        #expect(xml.contains("<signal name=\"Pong\">"))
        #expect(xml.contains("<property name=\"Volume\" type=\"i\" access=\"readwrite\"/>"))
        let parent = try connection.call(destination: EchoServer.name, path: "/org/chime", interface: .introspectable,
                                         member: "Introspect").first?.stringValue ?? ""
        #expect(parent.contains("<node name=\"Test\"/>"))

        func property(_ member: MemberName, _ args: [Value]) throws -> [Value] {
            try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: .properties, member: member, arguments: args)
        }
        #expect(try property("Get", [.string("org.chime.Test.Echo"), .string("Name")]) == [.variant(.string("echo"))])
        _ = try property("Set", [.string("org.chime.Test.Echo"), .string("Volume"), .variant(.int32(9))])
        #expect(try property("Get", [.string("org.chime.Test.Echo"), .string("Volume")]) == [.variant(.int32(9))])
        #expect(try property("GetAll", [.string("org.chime.Test.Echo")]) == [.vardict([("Name", .string("echo")), ("Volume", .int32(9))])])
        #expect(throws: DBusError.self) { try property("Set", [.string("org.chime.Test.Echo"), .string("Name"), .variant(.string("x"))]) }
        #expect(throws: DBusError.self) { try property("Set", [.string("org.chime.Test.Echo"), .string("Volume"), .variant(.int32(11))]) }
        #expect(throws: DBusError.self) { try property("Get", [.string("org.chime.Test.Echo"), .string("Nope")]) }
        // libdbus answers Peer itself.
        _ = try connection.call(destination: EchoServer.name, path: EchoServer.path, interface: .peer, member: "Ping")
    }

    @Test func signalsAreBelievedOnlyFromTheirSender() throws {
        defer { finish() }
        let listener = try bus.connect()
        let forger = try bus.connect()
        var changes: [String] = []
        try listener.watchNameOwner("org.chime.Test.Watched") { _, new in changes.append(new) }
        var pongs: [String] = []
        try listener.subscribe(MatchRule(sender: EchoServer.name, interface: EchoServer.interface, member: "Pong")) {
            pongs.append($0.arguments().first?.stringValue ?? "?")
        }
        // Any client may send any signal straight to us; these name senders they are not.
        func forge(_ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ args: [Value]) throws {
            let signal = try Message.signal(path: path, interface: interface, member: member, arguments: args,
                                            destination: BusName(rawValue: listener.uniqueName))
            try forger.send(signal)
            forger.flush()
        }
        try forge("/org/freedesktop/DBus", .dbus, "NameOwnerChanged", [.string("org.chime.Test.Watched"), .string(""), .string(":1.999")])
        try forge(EchoServer.path, EchoServer.interface, "Pong", [.string("forged")])
        #expect(listener.run(until: .now + .milliseconds(300)) { true } == .timedOut)
        #expect(changes.isEmpty)
        #expect(pongs.isEmpty)
        // The real ones arrive: the bus driver's, and the name owner's.
        let owner = try bus.connect()
        #expect(try owner.requestName("org.chime.Test.Watched") == .primaryOwner)
        _ = try listener.call(destination: EchoServer.name, path: EchoServer.path, interface: EchoServer.interface,
                              member: "Ping", arguments: [.string("real")])
        #expect(listener.run(until: .now + .seconds(5)) { changes.isEmpty || pongs.isEmpty } == .finished)
        #expect(changes == [owner.uniqueName])
        #expect(pongs == ["real"])
        // When another client takes over the name, its signals are the ones believed. (The name is
        // free once the bus says so: it hears the echo server's connection close in its own time,
        // and a request before that was queued behind it, once, on a busy machine.)
        var echoGone = false
        try listener.watchNameOwner(EchoServer.name) { _, new in if new.isEmpty { echoGone = true } }
        echo.stop()
        #expect(listener.run(until: .now + .seconds(10)) { !echoGone } == .finished)
        #expect(try forger.requestName(EchoServer.name) == .primaryOwner)
        _ = listener.run(until: .now + .milliseconds(200)) { true }
        try forger.emit(path: EchoServer.path, interface: EchoServer.interface, member: "Pong", arguments: [.string("new owner")])
        forger.flush()
        #expect(listener.run(until: .now + .seconds(5)) { pongs.count < 2 } == .finished)
        #expect(pongs == ["real", "new owner"])
    }

    @Test func everyCallOnEveryPathIsAnswered() throws {
        defer { finish() }
        let connection = try bus.connect()
        func call(_ path: ObjectPath, _ interface: InterfaceName?, _ member: MemberName) throws -> [Value] {
            try connection.call(destination: EchoServer.name, path: path, interface: interface, member: member, timeout: .milliseconds(2000))
        }
        // The nodes above an object introspect, each naming the next one down.
        for (path, child) in [("/", "org"), ("/org", "chime"), ("/org/chime", "Test"), ("/org/chime/Test", "Echo")] as [(ObjectPath, String)] {
            let xml = try call(path, .introspectable, "Introspect").first?.stringValue ?? ""
            #expect(xml.contains("<node name=\"\(child)\"/>"), "\(path)")
        }
        // Anything else is an error at once, never a wait for the timeout.
        let started = ContinuousClock.now
        for (path, interface, expected) in [
            ("/org/chime", EchoServer.interface, ErrorName.unknownInterface), ("/org/chime", nil, .unknownMethod),
            ("/nowhere", EchoServer.interface, .unknownObject), ("/nowhere", .introspectable, .unknownObject),
            (EchoServer.path, "org.chime.Test.Other", .unknownInterface), (EchoServer.path, EchoServer.interface, .unknownMethod),
        ] as [(ObjectPath, InterfaceName?, ErrorName)] {
            do {
                _ = try call(path, interface, "Nothing")
                Issue.record("\(path) answered Nothing")
            } catch let error as DBusError {
                #expect(error.name == expected, "\(path) \(interface?.rawValue ?? "-"): \(error)")
            }
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        _ = try call("/nowhere", .peer, "Ping")
    }

    @Test func aTakenNameIsReported() throws {
        defer { finish() }
        let connection = try bus.connect()
        #expect(try connection.requestName(EchoServer.name) == .exists)
        #expect(try connection.requestName("org.chime.Test.Mine") == .primaryOwner)
        #expect(try connection.requestName("org.chime.Test.Mine") == .alreadyOwner)
    }

    @Test func theSessionBusIsFoundWithoutTheVariable() throws {
        defer { finish() }
        // The search order cron jobs and ssh sessions rely on: $XDG_RUNTIME_DIR/bus.
        let socket = bus.address.split(separator: ",").first.map(String.init) ?? ""
        #expect(socket.hasPrefix("unix:path="))
        let runtime = try makeTemporaryDirectory("chime-runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        try FileManager.default.createSymbolicLink(atPath: runtime.appendingPathComponent("bus").path,
                                                   withDestinationPath: String(socket.dropFirst("unix:path=".count)))
        let saved = (getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }, getenv("XDG_RUNTIME_DIR").map { String(cString: $0) })
        defer {
            if let a = saved.0 { setenv("DBUS_SESSION_BUS_ADDRESS", a, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") }
            if let r = saved.1 { setenv("XDG_RUNTIME_DIR", r, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
        }
        unsetenv("DBUS_SESSION_BUS_ADDRESS")
        setenv("XDG_RUNTIME_DIR", runtime.path, 1)
        #expect(try Connection.sessionBusAddress() == "unix:path=" + runtime.path + "/bus")
        let connection = try Connection(.session)
        #expect(try connection.nameHasOwner(EchoServer.name))
    }
}
